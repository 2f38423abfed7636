"""The watchdog of analyses that will never come: a live session stuck in `processing` goes back to its step.

A lost or expired task message would leave the session in `processing` for ever; the periodic
`stuck_analyses_release` sends it back to the step the user was on, with a message and without
counting the attempt.
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from .analysis import ANALYSIS_TASK_EXPIRES, RETAKE_CAUSE_PREFIX
from .models import Mode, Status, Step, VerificationSession
from .state_machine import session_transition

logger = logging.getLogger(__name__)

# Past the message's lifetime and this margin, no worker can still be deciding the session.
STUCK_ANALYSIS_MARGIN = 5 * 60
MESSAGE_ANALYSIS_LOST = "We could not check your pictures in time. This attempt does not count."


def stuck_analyses_release(*, batch_size: int = 200) -> int:
    """Send live sessions stuck in `processing` back to the step they were on; returns how many.

    Sandbox sessions are left alone (a partner may park one in processing on purpose), and so are
    sessions past their expiry, which the expiry task finalizes as denied/expired.
    """
    now = timezone.now()
    cutoff = now - timedelta(seconds=ANALYSIS_TASK_EXPIRES + STUCK_ANALYSIS_MARGIN)
    stuck = VerificationSession.objects.filter(
        status=Status.PROCESSING, mode=Mode.LIVE, updated_at__lte=cutoff, expires_at__gt=now
    ).order_by("updated_at")
    stuck_ids = list(stuck.values_list("id", flat=True)[:batch_size])
    return sum(_stuck_analysis_release(session_id, cutoff) for session_id in stuck_ids)


@transaction.atomic
def _stuck_analysis_release(session_id: str, cutoff) -> bool:
    # Locked and checked again: a decision, a cancel or a new submission since the query wins.
    session = (
        VerificationSession.objects.select_for_update()
        .filter(pk=session_id, status=Status.PROCESSING, updated_at__lte=cutoff)
        .first()
    )
    if session is None:
        return False
    back_to = Status.REQUIRES_DOC if session.step == Step.DOCUMENT else Status.INITIATED
    # No attempt counter moves: the user's pictures were never judged.
    session_transition(
        session_id=session_id,
        to=back_to,
        expected_from=(Status.PROCESSING,),
        cause=RETAKE_CAUSE_PREFIX + MESSAGE_ANALYSIS_LOST,
        message=MESSAGE_ANALYSIS_LOST,
    )
    logger.warning("analysis of %s never came: sent back to %s", session_id, back_to)
    return True
