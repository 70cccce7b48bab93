"""
`lal-serve`: a trained parser behind a web page and a JSON API (`app.create_app`), with
concurrent requests parsed in batches (`batching.RequestBatcher`).
"""
from lal_allennlp.serving.app import create_app
from lal_allennlp.serving.batching import RequestBatcher

__all__ = ["create_app", "RequestBatcher"]
