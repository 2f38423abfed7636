"""Fixtures for the checks tests: real photos from scikit-image, encoded in memory."""

import pytest

from tests.support.pictures import jpeg


@pytest.fixture(scope="session")
def astronaut_jpeg() -> bytes:
    from skimage import data

    return jpeg(data.astronaut())


@pytest.fixture(scope="session")
def cat_jpeg() -> bytes:
    from skimage import data

    return jpeg(data.chelsea())


def pytest_collection_modifyitems(items):
    # passporteye 2.2.2 calls an API scikit-image 0.26 deprecates; checks.document silences it
    # at import, but pytest resets warning filters around each test.
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.filterwarnings("ignore::FutureWarning"))
