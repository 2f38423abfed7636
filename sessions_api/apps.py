"""Sessions: the partner API, the session state machine and the stored check results."""

import sys

from django.apps import AppConfig
from django.core import checks as system_checks


class SessionsApiConfig(AppConfig):
    name = "sessions_api"
    verbose_name = "Verification sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from .age_policy import age_policy

        # Read at start-up with its readers: a missing or malformed policy, or readers other than those it was
        # calibrated for, stop the service here, not at a user's selfie. Except in the command that writes them,
        # which must run where there are none yet (an operator's first refit) or only mismatched ones.
        if sys.argv[1:2] != [POLICY_WRITER]:
            age_policy()
        system_checks.register(age_policy_matches_network)


POLICY_WRITER = "calibrate_age_policy"


def age_policy_matches_network(app_configs=None, **kwargs):
    """The thresholds were measured on one age network; with another they say nothing."""
    from checks.age import age_network

    from .age_policy import age_policy

    policy = age_policy()
    if policy.network != age_network():
        return [
            system_checks.Warning(
                f"the age policy {policy.version} was calibrated for {policy.network!r}, "
                f"the service runs {age_network()!r}",
                hint="run `manage.py calibrate_age_policy` on the calibration data and commit the new policy file",
                id="sessions_api.W001",
            )
        ]
    return []
