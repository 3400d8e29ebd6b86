"""The core layer: the persistent tree, its nodes' children slot, the compiled playouts."""
