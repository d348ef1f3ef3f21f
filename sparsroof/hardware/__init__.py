"""Hardware specs: the dataclasses (spec.py), the checks a YAML file must pass (schema.py),
and finding and reading the files (library.py): the bundled specs live in ``hwspecs/`` at
the top of the repository; a user's own YAML works wherever a bundled name does."""
