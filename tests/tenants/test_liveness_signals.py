"""The liveness signals a tenant may make flag-only are the ones the check fires, and the API may report."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from checks.liveness import SIGNALS
from sessions_api.api.serializers.outputs import LivenessOutputSerializer
from tenants.models import LIVENESS_SIGNALS, Tenant


def test_the_tenant_setting_the_check_and_the_api_name_the_same_signals():
    reported = LivenessOutputSerializer().fields["signals"].child.choices

    assert tuple(LIVENESS_SIGNALS) == tuple(SIGNALS) == tuple(reported)
    assert {"flash", "passive"} <= set(SIGNALS)


def test_an_unknown_signal_is_refused_with_the_list_of_known_ones():
    tenant = Tenant(name="t", liveness_flag_only=["flash", "blink"])

    with pytest.raises(ValidationError, match="flash, passive"):
        tenant.clean_fields(exclude=[f.name for f in Tenant._meta.fields if f.name != "liveness_flag_only"])
