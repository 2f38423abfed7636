"""A tenant's branding of the hosted flow: display name, logo, accent colour and privacy-notice link.

Checked here, whoever writes it (the dashboard's Branding page):
  * the logo is a PNG, JPEG or WebP of at most LOGO_MAX_BYTES, decoded in full (so a truncated or
    disguised file is refused) and re-encoded as a PNG no larger than LOGO_MAX_BOX: the service serves
    its own PNG, never the uploaded bytes. SVG is refused (it can carry scripts; no sanitiser is kept).
  * the accent colour paints the flow's primary buttons (white text on it) and its links (on the
    white card and the light page and hover backgrounds): it must reach WCAG 2.2 AA's 4.5:1 contrast
    against every one of those.
  * the privacy-notice link is an https address.
"""

import hashlib
import io
import re
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from PIL import Image, UnidentifiedImageError

from .audit import Actor, changes_record
from .models import AuditLogEntry, Tenant, TenantBranding

LOGO_MAX_BYTES = 512 * 1024
LOGO_FORMATS = {"PNG": "PNG", "JPEG": "JPEG", "WEBP": "WebP"}
LOGO_MAX_SOURCE_SIDE = 4096  # checked from the header, before any pixel is decoded
LOGO_MIN_SIDE = 16
LOGO_MAX_BOX = (480, 160)  # twice the size the flow shows it at, for sharp high-density screens
# What the accent colour meets in the flow (static/flow/flow.css): button text and the card (#ffffff),
# the page (#f3f5f8), the secondary button's hover (#eff4ff).
ACCENT_BACKGROUNDS = ("#ffffff", "#f3f5f8", "#eff4ff")
MIN_CONTRAST = 4.5  # WCAG 2.2 AA, normal-size text
_HEX_COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


@dataclass(frozen=True)
class Branding:
    """What the flow shows of a tenant; `name` is the display name, else the tenant's own."""

    tenant_id: str
    name: str
    accent_color: str = ""
    accent_dark: str = ""  # the accent darkened for hover states
    privacy_notice_url: str = ""
    logo_version: str = ""  # a prefix of the logo's SHA-256, empty without a logo
    logo_width: int | None = None
    logo_height: int | None = None


def _luminance(colour: str) -> float:
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(first: str, second: str) -> float:
    """WCAG 2.2's contrast ratio of two "#rrggbb" colours, from 1 to 21."""
    lighter, darker = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


def _darken(colour: str, share: float = 0.25) -> str:
    return "#" + "".join(f"{round(int(colour[i : i + 2], 16) * (1 - share)):02x}" for i in (1, 3, 5))


def _lighten(colour: str, share: float = 0.55) -> str:
    return "#" + "".join(f"{round(255 - (255 - int(colour[i : i + 2], 16)) * (1 - share)):02x}" for i in (1, 3, 5))


def accent_color_check(colour: str) -> str:
    """The colour, lower-cased, or a ValidationError saying which contrast falls short."""
    colour = colour.strip()
    if not _HEX_COLOUR.match(colour):
        raise ValidationError("Give the colour as #rrggbb, for example #1d4ed8.", code="invalid")
    colour = colour.lower()
    worst = min(contrast_ratio(colour, background) for background in ACCENT_BACKGROUNDS)
    if worst < MIN_CONTRAST:
        raise ValidationError(
            f"{colour} has a contrast of {worst:.2f}:1 with the flow's white button text and light backgrounds; "
            f"WCAG 2.2 AA needs at least {MIN_CONTRAST}:1. Choose a darker colour.",
            code="low_contrast",
        )
    return colour


def privacy_notice_url_check(url: str) -> str:
    url = url.strip()
    URLValidator(schemes=["https"], message="Give the privacy notice's full https:// address.")(url)
    return url


def logo_check(data: bytes) -> tuple[bytes, int, int]:
    """The logo re-encoded as PNG, with its width and height; ValidationError if it is not an acceptable image."""
    if not data:
        raise ValidationError("The logo file is empty.", code="empty")
    if len(data) > LOGO_MAX_BYTES:
        raise ValidationError(
            f"The logo is {len(data) // 1024} KB; at most {LOGO_MAX_BYTES // 1024} KB is accepted.", code="too_large"
        )
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith(b"<") and b"<svg" in head:
        raise ValidationError(
            "SVG logos are not accepted (they can carry scripts): upload a PNG, JPEG or WebP.", code="svg"
        )
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format not in LOGO_FORMATS:
                raise ValidationError(f"The logo is a {image.format} image; upload a PNG, JPEG or WebP.", code="format")
            width, height = image.size
            if max(width, height) > LOGO_MAX_SOURCE_SIDE or min(width, height) < LOGO_MIN_SIDE:
                raise ValidationError(
                    f"The logo is {width}×{height} pixels; each side must be {LOGO_MIN_SIDE} to "
                    f"{LOGO_MAX_SOURCE_SIDE} pixels.",
                    code="dimensions",
                )
            image.load()  # decode every pixel: a truncated or corrupt file fails here
            logo = image.convert("RGBA")
    except ValidationError:
        raise
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError):
        raise ValidationError(
            "The logo could not be read as an image; upload a PNG, JPEG or WebP.", code="not_an_image"
        ) from None
    logo.thumbnail(LOGO_MAX_BOX, Image.Resampling.LANCZOS)
    out = io.BytesIO()
    logo.save(out, format="PNG", optimize=True)
    return out.getvalue(), logo.width, logo.height


# The fields whose old and new values the audit row shows, by the names the Branding page gives them.
BRANDING_FIELDS = {"display_name": "display name", "accent_color": "accent colour", "privacy_notice_url": "privacy URL"}


@transaction.atomic
def tenant_branding_update(
    *,
    tenant: Tenant,
    actor: Actor,
    display_name: str,
    accent_color: str,
    privacy_notice_url: str,
    logo: bytes | None = None,
    remove_logo: bool = False,
) -> TenantBranding:
    """Check every field, then save them together; a ValidationError (by field) changes nothing.

    One audit row says what changed, old and new values (none when nothing did).
    """
    errors = {}
    checked = {"display_name": display_name.strip()[:100], "accent_color": "", "privacy_notice_url": ""}
    for field, value, check in (
        ("accent_color", accent_color, accent_color_check),
        ("privacy_notice_url", privacy_notice_url, privacy_notice_url_check),
    ):
        if value.strip():
            try:
                checked[field] = check(value)
            except ValidationError as error:
                errors[field] = error.messages
    logo_fields = {}
    if logo is not None:
        try:
            png, width, height = logo_check(logo)
        except ValidationError as error:
            errors["logo"] = error.messages
        else:
            logo_fields = {
                "logo_png": png,
                "logo_sha256": hashlib.sha256(png).hexdigest(),
                "logo_width": width,
                "logo_height": height,
            }
    elif remove_logo:
        logo_fields = {"logo_png": None, "logo_sha256": "", "logo_width": None, "logo_height": None}
    if errors:
        raise ValidationError(errors)
    before = tenant_branding_form_values(tenant)
    old = {name: getattr(before, name) for name in BRANDING_FIELDS}
    branding, _ = TenantBranding.objects.update_or_create(tenant=tenant, defaults={**checked, **logo_fields})
    changed = {
        label: f"{old[name] or '(none)'} → {getattr(branding, name) or '(none)'}"
        for name, label in BRANDING_FIELDS.items()
        if old[name] != getattr(branding, name)
    }
    if branding.logo_sha256 != before.logo_sha256:
        changed["logo"] = f"new ({branding.logo_width}×{branding.logo_height})" if branding.logo_sha256 else "removed"
    changes_record(
        tenant=tenant,
        actor=actor,
        action=AuditLogEntry.Action.BRANDING_CHANGED,
        target_type="branding",
        changed=changed,
    )
    return branding


def tenant_branding_form_values(tenant: Tenant) -> TenantBranding:
    """The stored branding (unsaved and empty if there is none), for a form to start from."""
    return TenantBranding.objects.filter(tenant=tenant).defer("logo_png").first() or TenantBranding(tenant=tenant)


def tenant_branding(tenant: Tenant) -> Branding:
    """What the flow shows for `tenant` (its name and the service's look when it has no branding)."""
    stored = TenantBranding.objects.filter(tenant=tenant).defer("logo_png").first()
    if stored is None:
        return Branding(tenant_id=tenant.id, name=tenant.name)
    return Branding(
        tenant_id=tenant.id,
        name=stored.display_name or tenant.name,
        accent_color=stored.accent_color,
        accent_dark=_darken(stored.accent_color) if stored.accent_color else "",
        privacy_notice_url=stored.privacy_notice_url,
        logo_version=stored.logo_sha256[:16],
        logo_width=stored.logo_width,
        logo_height=stored.logo_height,
    )


def tenant_logo(tenant_id: str) -> tuple[bytes, str] | None:
    """The tenant's logo PNG and its SHA-256, or None."""
    stored = (
        TenantBranding.objects.filter(tenant_id=tenant_id)
        .exclude(logo_png=None)
        .only("logo_png", "logo_sha256")
        .first()
    )
    return (bytes(stored.logo_png), stored.logo_sha256) if stored else None


def tenant_accent(tenant_id: str) -> tuple[str, str, str] | None:
    """The accent colour of `tenant_id`, its darker hover shade and its light shade (done steps), or None."""
    colour = (
        TenantBranding.objects.filter(tenant_id=tenant_id)
        .exclude(accent_color="")
        .values_list("accent_color", flat=True)
        .first()
    )
    return (colour, _darken(colour), _lighten(colour)) if colour else None
