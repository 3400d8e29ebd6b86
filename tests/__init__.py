"""treelab's test suite: one folder per package of treelab (docs/development.md, "Where the tests live").

The modules at this level are shared helpers, imported by name (pyproject.toml puts tests/ on the path).
"""
