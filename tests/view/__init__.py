"""Diagrams, the explorer and the stepper (treelab.view)."""
