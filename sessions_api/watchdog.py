"""The watchdog of analyses that will never come: a live session stuck in `processing` goes back to its step.

A lost or expired task message would leave the session in `processing` for ever; the periodic
`stuck_analyses_release` sends it back to the step the user was on, with a message and without
counting the attempt, once no worker can still be deciding it (15 minutes). When Redis came back empty,
the messages queued in it are known lost at once: `lost_analyses_release` (every few seconds) sends
back the sessions whose analysis was queued under an older broker epoch (core.broker_epoch). The
pictures lived only in those messages (nothing keeps an image), so the user takes them again; the
attempt does not count. An analysis a worker was running when Redis went keeps running, and if its
decision comes after that, it is dropped (the session has left `processing`): that user retakes too.
"""

import logging
from datetime import timedelta

import redis
from django.db import transaction
from django.utils import timezone

from core.broker_epoch import broker_epoch

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
    return sum(
        _analysis_release(VerificationSession.objects.filter(pk=session_id, updated_at__lte=cutoff))
        for session_id in stuck_ids
    )


def lost_analyses_release(*, batch_size: int = 200) -> int:
    """Send open sessions whose analysis was queued in a Redis that has since come back empty back to their
    step at once; returns how many. Nothing is known while the broker is unreachable."""
    try:
        epoch = broker_epoch()
    except redis.RedisError as error:
        logger.warning("lost analyses not looked for, the broker is unreachable: %s", error)
        return 0
    if epoch is None:
        return 0
    lost = VerificationSession.objects.filter(status=Status.PROCESSING, expires_at__gt=timezone.now()).exclude(
        analysis_epoch__in=("", epoch.token)
    )
    lost_ids = list(lost.values_list("id", flat=True)[:batch_size])
    return sum(
        _analysis_release(
            VerificationSession.objects.filter(pk=session_id).exclude(analysis_epoch__in=("", epoch.token))
        )
        for session_id in lost_ids
    )


@transaction.atomic
def _analysis_release(still_lost) -> bool:
    # Locked and checked again: a decision, a cancel or a new submission since the query wins.
    session = still_lost.select_for_update().filter(status=Status.PROCESSING).first()
    if session is None:
        return False
    session_id = session.id
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
