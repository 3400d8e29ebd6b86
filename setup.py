"""The compiled hot paths of treelab; everything else about the package is in ``pyproject.toml``.

setuptools reads ``[[tool.setuptools.ext-modules]]`` from ``pyproject.toml`` only as an
experimental feature and warns (``BuildBackendWarning``) on every build, so the extensions are
declared here, setuptools' stable way. It is optional: without a C compiler the install still
succeeds and the pure-Python code runs (``treelab.fastpath.describe()`` says which).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "treelab._speedups",
            sources=["treelab/_speedups.c", "treelab/_nodes.c", "treelab/_rows.c", "treelab/_loop.c",
                     "treelab/_columns.c"],
            depends=["treelab/_speedups.h"],
            optional=True,
        ),
        Extension(  # the exact Connect Four solver of treelab.oracle (after Pascal Pons' method)
            "treelab._c4solver",
            sources=["treelab/_c4solver.c"],
            extra_compile_args=["-O3"],
            optional=True,
        ),
    ]
)
