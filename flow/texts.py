"""What the flow's pages say to the user, apart from the views' control flow."""
from sessions_api.choices import Reason, Status

INSTRUCTIONS = {
    "left": "Turn your head slowly to your left",
    "right": "Turn your head slowly to your right",
    "center": "Look straight at the camera",
}
DENIAL_MESSAGES = {
    Reason.CANCELLED: "You cancelled the verification.",
    Reason.EXPIRED: "The time for this verification ran out.",
    Reason.LIVENESS_FAILED: "We could not confirm that a live person took the selfie.",
    Reason.ATTEMPTS_EXCEEDED: "We could not use the pictures after several attempts.",
    Reason.DOCUMENT_INVALID: "We could not validate the document.",
    Reason.DOCUMENT_EXPIRED: "The document has expired.",
    Reason.UNDERAGE_DOCUMENT: "The document shows that you do not meet the minimum age.",
    Reason.DOCUMENT_MISMATCH: "The face in front of the camera did not match the photo on the document.",
}
SANDBOX_OUTCOMES = {
    Status.INITIATED: [("approved", "Approve (age estimation)"), ("requires_doc", "Ask for a document"),
                       ("denied", "Deny (liveness failed)"), ("processing", "Stay in processing")],
    Status.REQUIRES_DOC: [("approved", "Approve (document)"), ("denied", "Deny (underage document)"),
                          ("processing", "Stay in processing")],
}
MESSAGE_NO_DOCUMENT_PICTURE = "Choose or take a picture of your document first."
