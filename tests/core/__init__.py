"""The core layer: the persistent tree, its nodes (their children slot, their memory), the compiled playouts."""
