"""Performance budgets for CI: the budget file, the inputs it reads and the check that
judges results against it."""
