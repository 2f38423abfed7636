"""The benchmark's settings overlay adds its baseline view and leaves the product's routes as production has them."""

from django.urls import get_resolver


def test_the_api_benchmark_resolves_the_product_s_routes_as_production_does():
    production = get_resolver("ageverify.urls")
    overlay = get_resolver("bench.api_urls")

    assert overlay.resolve("/v1/bench/baseline").func.__name__ == "baseline"
    for path in ("/v1/sessions", "/v1/sessions/ses_01K0000000000000000000000", "/flow/start", "/healthz"):
        served, measured = production.resolve(path), overlay.resolve(path)
        assert (measured.func, measured.route, measured.url_name) == (served.func, served.route, served.url_name)
        # No extra include level: each resolver level is work a request pays, which production does not.
        assert len(measured.tried[-1]) == len(served.tried[-1])
