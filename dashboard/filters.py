"""List filters of the dashboard's session list: status, mode and a created-date range, all tenant-agnostic."""

from datetime import UTC, date, datetime, time, timedelta

from django.contrib import admin

from sessions_api.models import Mode, Status


class ChoiceFilter(admin.SimpleListFilter):
    """A plain `?name=value` filter; an unknown value is reported on the page and not applied."""

    field_name = ""
    all_choices: list[tuple[str, str]] = []

    def lookups(self, request, model_admin):
        return self.all_choices

    @property
    def error(self) -> str:
        value = self.value()
        if value and value not in dict(self.all_choices):
            return f"Unknown {self.title} {value!r}: showing every {self.title}."
        return ""

    def queryset(self, request, queryset):
        value = self.value()
        if value and not self.error:
            return queryset.filter(**{self.field_name: value})
        return queryset


class StatusFilter(ChoiceFilter):
    title = "status"
    parameter_name = field_name = "status"
    all_choices = Status.choices


class ModeFilter(ChoiceFilter):
    title = "mode"
    parameter_name = field_name = "mode"
    all_choices = Mode.choices


def _parse_day(value: str) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None


class CreatedRangeFilter(admin.ListFilter):
    """`?from=YYYY-MM-DD&to=YYYY-MM-DD`, both inclusive UTC days, either may be left out."""

    title = "created"
    parameter_from = "from"
    parameter_to = "to"

    def __init__(self, request, params, model, model_admin):
        super().__init__(request, params, model, model_admin)
        for name in (self.parameter_from, self.parameter_to):
            if name in params:
                self.used_parameters[name] = params.pop(name)[-1].strip()
        self.raw_from = self.used_parameters.get(self.parameter_from, "")
        self.raw_to = self.used_parameters.get(self.parameter_to, "")
        self.day_from = _parse_day(self.raw_from)
        self.day_to = _parse_day(self.raw_to)
        errors = []
        if self.raw_from and self.day_from is None:
            errors.append(f"'{self.raw_from}' is not a date (use YYYY-MM-DD).")
        if self.raw_to and self.day_to is None:
            errors.append(f"'{self.raw_to}' is not a date (use YYYY-MM-DD).")
        if self.day_from and self.day_to and self.day_from > self.day_to:
            errors.append("The start date is after the end date.")
        self.error = " ".join(errors)

    def has_output(self):
        return True

    def choices(self, changelist):
        return []

    def expected_parameters(self):
        return [self.parameter_from, self.parameter_to]

    def queryset(self, request, queryset):
        if self.error:
            return queryset
        if self.day_from:
            start = datetime.combine(self.day_from, time.min, tzinfo=UTC)
            queryset = queryset.filter(created_at__gte=start)
        # The calendar's last day has no next day to stop before: up to it is no upper bound at all.
        if self.day_to and self.day_to < date.max:
            end = datetime.combine(self.day_to + timedelta(days=1), time.min, tzinfo=UTC)
            queryset = queryset.filter(created_at__lt=end)
        return queryset
