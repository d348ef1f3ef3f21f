"""Matrices in: Matrix Market and sparse-tensor files, collections and archives of
them, and generators of synthetic patterns. Everything above works on :class:`Matrix`."""
