"""Generated JSON bodies for POST /v1/sessions (hypothesis strategies): near-valid ones and anything at all."""

from hypothesis import strategies as st

FIELDS = ["subject", "age_limit", "callback_url", "cancel_url", "notification_url", "metadata"]
# Every code point, lone surrogates and NUL included: JSON escapes carry them all.
any_text = st.text(st.characters(codec=None, categories=None), max_size=40)
urls = st.one_of(
    st.sampled_from(
        [
            "https://shop.example.com/ok",
            "http://localhost/ok",
            "https://10.0.0.1/x",
            "https://[::1]/x",
            "http://shop.example.com/ok",
            "https://",
            "ftp://x.example/",
        ]
    ),
    st.builds(lambda host, tail: f"https://{host}/{tail}", any_text, any_text),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    any_text,
    urls,
)
# Near-valid metadata: string to string, around the limits (40-character keys, 500-character values, 50 keys).
metadata_objects = st.one_of(
    st.dictionaries(
        st.one_of(any_text, st.builds(lambda n: "k" * n, st.integers(38, 42))),
        st.one_of(any_text, st.builds(lambda n: "v" * n, st.integers(498, 502)), st.integers()),
        max_size=4,
    ),
    st.builds(lambda n: {f"key{i}": str(i) for i in range(n)}, st.integers(49, 51)),
)
json_values = st.recursive(
    st.one_of(scalars, metadata_objects),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(any_text, children, max_size=4),
    max_leaves=12,
)
# Mostly the real field names, so bodies get past the shape checks and into each field's validation.
near_valid_bodies = st.dictionaries(st.sampled_from(FIELDS) | any_text, json_values, max_size=7)
bodies = st.one_of(near_valid_bodies, json_values)
