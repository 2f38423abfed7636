"""Settings overlay used only by bench/api.py: the product's settings plus the benchmark's baseline view."""

from ageverify.settings import *  # noqa: F401,F403 -- the overlay is the product's settings, changed only below

ROOT_URLCONF = "bench.api_urls"

import warnings  # noqa: E402 - the overlay starts from the product's settings

# Production runs `collectstatic`; the benchmark does not need the static files WhiteNoise looks for.
warnings.filterwarnings("ignore", "No directory at")
