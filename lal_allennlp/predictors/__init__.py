"""Predictors: JSON in, trees out (installed as `lal_allennlp.predictors`)."""
from lal_allennlp.predictors.parser_predictor import ParserPredictor
