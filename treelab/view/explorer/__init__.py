"""The interactive explorer: a local web app over a treelab database (``treelab serve``).

``data`` answers the JSON API from the database, ``diagram`` draws subtrees,
``app`` is the Starlette app (page, static files, API), ``server`` binds the
port and runs uvicorn; ``static/`` holds the page, its script and styles.
The compare view's answer (a diff of two trees) comes from the analysis
layer, wired in by :mod:`treelab.play.explorer`.
"""
