"""Bring your own search (treelab.interop): imported trees and exported formats."""
