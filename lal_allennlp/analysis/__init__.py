"""Analyses of parser outputs: significance tests, error analysis, head contributions over a corpus."""
