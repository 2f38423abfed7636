"""The settings form of a publishable key, shared by the operators' admin and the tenant dashboard."""

from django import forms
from django.core.exceptions import ValidationError

from .client_settings import entries_clean, origin_normalize, return_url_validate
from .models import PublishableKey


class LinesField(forms.CharField):
    """A list edited as one entry per line; each line normalized (or refused) by `normalize`."""

    widget = forms.Textarea(attrs={"rows": 3, "cols": 60})

    def __init__(self, *, normalize, **kwargs):
        self.normalize = normalize
        super().__init__(required=False, **kwargs)

    def prepare_value(self, value):
        return "\n".join(value) if isinstance(value, list) else value

    def clean(self, value):
        try:
            return entries_clean(super().clean(value) or "", self.normalize)
        except ValidationError as error:
            raise ValidationError(error.messages) from None


class PublishableKeySettingsForm(forms.ModelForm):
    allowed_origins = LinesField(
        normalize=origin_normalize,
        help_text=(
            "One per line, exactly as the browser sends it: https://shop.example (no path). Only these pages may "
            "frame the flow and call the client endpoints."
        ),
    )
    return_urls = LinesField(
        label="Return URLs",
        normalize=return_url_validate,
        help_text=(
            "One per line: https://... or your app's own scheme (myapp://verified). A mobile hand-off returns there "
            "with session_id and status."
        ),
    )

    class Meta:
        model = PublishableKey
        fields = (
            "label",
            "allowed_origins",
            "return_urls",
            "client_sessions_enabled",
            "client_age_limit",
            "client_notification_url",
        )

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("client_sessions_enabled") and not cleaned.get("client_age_limit"):
            self.add_error("client_age_limit", "Client sessions need the age limit they are created with (10 to 21).")
        return cleaned
