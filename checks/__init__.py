"""Age, liveness and document checks: pure Python over image bytes, no Django.

Import the submodules directly (``checks.age``, ``checks.liveness``, ``checks.document``,
``checks.images``); importing this package loads no model.
"""
