"""What the flow's pages say to the user, apart from the views' control flow; translated (flow/locale/).

The pages' scripts take their words from `SCRIPT_TEXTS`, rendered into each page as JSON, so every
sentence the user reads is in the catalog, in the page's language.
"""

from django.utils.translation import gettext_lazy as _

from sessions_api.choices import Reason, Status, Step

INSTRUCTIONS = {
    "left": _("Turn your head slowly to your left"),
    "right": _("Turn your head slowly to your right"),
    "center": _("Look straight at the camera"),
}
DENIAL_MESSAGES = {
    Reason.CANCELLED: _("You cancelled the verification."),
    Reason.EXPIRED: _("The time for this verification ran out."),
    Reason.LIVENESS_FAILED: _("We could not confirm that a live person took the selfie."),
    Reason.ATTEMPTS_EXCEEDED: _("We could not use the pictures after several attempts."),
    Reason.DOCUMENT_INVALID: _("We could not validate the document."),
    Reason.DOCUMENT_EXPIRED: _("The document has expired."),
    Reason.UNDERAGE_DOCUMENT: _("The document shows that you do not meet the minimum age."),
    Reason.DOCUMENT_MISMATCH: _("The face in front of the camera did not match the photo on the document."),
    Reason.UNDERAGE_DIGITAL_ID: _("Your digital ID shows that you do not meet the minimum age."),
}
DENIAL_MESSAGE_OTHER = _("We could not verify your age.")
# No selfie was taken when the head turns of the document step failed.
DENIAL_MESSAGE_HEAD_TURNS_NOT_LIVE = _(
    "We could not confirm that a live person was in front of the camera during the head turns."
)


def denial_message(reason: str, *, step: str):
    """What the result page says of a denial, for the step the session ended on (a selfie, or a document)."""
    if reason == Reason.LIVENESS_FAILED and step == Step.DOCUMENT:
        return DENIAL_MESSAGE_HEAD_TURNS_NOT_LIVE
    return DENIAL_MESSAGES.get(reason, DENIAL_MESSAGE_OTHER)


SANDBOX_OUTCOMES = {
    Status.INITIATED: [
        ("approved", _("Approve (age estimation)")),
        ("requires_doc", _("Ask for a document")),
        ("denied", _("Deny (liveness failed)")),
        ("processing", _("Stay in processing")),
    ],
    Status.REQUIRES_DOC: [
        ("approved", _("Approve (document)")),
        ("denied", _("Deny (underage document)")),
        ("processing", _("Stay in processing")),
    ],
}
# No face can approve at an age limit where the face path is off: an approval there stands for a document read.
SANDBOX_APPROVE_DOCUMENT = _("Approve (document)")
MESSAGE_CHOOSE_AN_OUTCOME = _("Choose one of the outcomes below.")

SCRIPT_TEXTS = {
    # static/flow/camera.js
    "cameraBlocked": _("Camera access was blocked. Allow the camera in your browser settings and try again."),
    "cameraNotFound": _("We could not find a camera on this device."),
    "cameraInUse": _("The camera is in use by another app. Close it and try again."),
    "cameraFailed": _("The camera could not be started."),
    "cameraStarting": _("Starting the camera…"),
    # static/flow/selfie.js
    "selfieCameraOn": _("Camera on. Put your face inside the oval, then press Start."),
    "selfieCameraFailed": _("You can upload photos below, or use an ID document instead."),
    # On the document page, where the head turns come with the document.
    "headTurnsCameraFailed": _("You can upload one photo for each instruction below instead."),
    # Translators: %(step)s and %(total)s are numbers: "Step 2 of 4".
    "selfieStep": _("Step %(step)s of %(total)s"),
    "selfieThanks": _("Thank you"),
    "selfieSending": _("Sending your pictures…"),
    "selfieCaptureFailed": _("The pictures could not be taken. Press Start to try again, or upload photos below."),
    # static/flow/document.js
    "documentFrame": _("Fill the frame with the document, then take the photo."),
    "documentCameraFailed": _("You can upload a photo below instead."),
    "documentCheck": _("Is all the text sharp and readable? If not, take another."),
    "documentSending": _("Sending your photo…"),
    "documentPrepareFailed": _("The photo could not be prepared. Take another, or upload one below."),
    "documentPreparing": _("Preparing your photo…"),
    "documentBackOffer": _("Got it. If the lines of letters or the barcode are on the back, photograph the back too."),
    "documentBackFrame": _("Now the back of the card, filling the frame, then take the photo."),
    "documentThenHeadTurns": _("Photo ready. Now turn on the camera for the head turns, below."),
    # static/flow/digital_id.js
    "digitalIdUnavailable": _("A digital ID cannot be used for this verification any more. Please use another way."),
    "digitalIdPrepareFailed": _("The digital ID option could not be prepared. Please use another way."),
    "digitalIdChecking": _("Checking your digital ID…"),
    "digitalIdNotVerified": _("We could not verify this digital ID. You can try again or use another way below."),
    "digitalIdFollow": _("Follow the steps on your phone or in your wallet."),
    "digitalIdDeclined": _("No digital ID was shared. You can try again or continue another way."),
    "digitalIdPhoneWaiting": _("Waiting for your wallet…"),
    "digitalIdPhoneFetched": _("Your wallet has the request: confirm it on your phone."),
    "digitalIdPhoneExpired": _("This code can no longer be used. Show a new code to try again."),
    # static/flow/progress.js
    "progressSlow": _("This is taking longer than usual. Please keep this page open."),
}
