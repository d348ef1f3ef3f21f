"""Hardware specs: the dataclasses, the YAML schema and its checks, the bundled specs
(``hwspecs/`` at the top of the repository) and a probe of this machine."""
