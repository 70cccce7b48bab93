"""Console commands: `lal-parse`."""
