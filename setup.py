"""The compiled hot paths of treelab; everything else about the package is in ``pyproject.toml``.

setuptools reads ``[[tool.setuptools.ext-modules]]`` from ``pyproject.toml`` only as an
experimental feature and warns (``BuildBackendWarning``) on every build, so the one extension is
declared here, setuptools' stable way. It is optional: without a C compiler the install still
succeeds and the pure-Python code runs (``treelab.speedups.describe()`` says which).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "treelab._speedups",
            sources=["treelab/_speedups.c", "treelab/_nodes.c", "treelab/_rows.c", "treelab/_loop.c",
                     "treelab/_columns.c", "treelab/_solver.c", "treelab/_puct.c"],
            depends=["treelab/_speedups.h"],
            optional=True,
        )
    ]
)
