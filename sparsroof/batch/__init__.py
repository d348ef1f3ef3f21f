"""Sweeping many matrices: the plan, the runner (local processes or Dask), the SQLite
store of results, exports and summaries of a run."""
