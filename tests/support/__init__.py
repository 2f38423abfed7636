"""What the tests share besides fixtures: the API client, picture and document builders, the HTTPS receiver, outages.

Fixtures stay in the conftest.py files; the factories of the domain's rows in tests/factories.py.
"""
