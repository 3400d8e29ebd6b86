"""treelab's test suite: one folder per package of treelab (docs/development.md, "Where the tests live").

The modules the folders share are in helpers/, imported by name (pyproject.toml puts that folder on the path).
"""
