"""The core layer: the persistent tree, its nodes' children slot, the compiled playouts (tree.py, nodes.py, speedups.py)."""
