"""Reading many labelled images in forked processes, results in order (the research commands' `--jobs`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")


def forked_map(function: Callable[[Item], Result], items: Sequence[Item], jobs: int) -> Iterator[Result]:
    """`function` over `items`, in their order: in `jobs` forked processes when there are more items than jobs.

    Each process loads the networks once (the function keeps them), so a few images are read in this one."""
    if jobs <= 1 or len(items) <= jobs:
        yield from map(function, items)
        return
    import multiprocessing

    from django.conf import settings
    from django.db import connections

    if settings.configured:  # a forked child must not share the parent's database connection
        connections.close_all()
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        yield from pool.imap(function, items, 8)
