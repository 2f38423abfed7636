"""The usage and funnel charts' geometry, computed server-side so the pages draw them as plain SVG with no script."""

import math
from dataclasses import dataclass, field

from .selectors import Usage

WIDTH = 760
HEIGHT = 220
MARGIN_LEFT = 40
MARGIN_RIGHT = 8
MARGIN_TOP = 12
MARGIN_BOTTOM = 28
BAR_FILL = 0.62  # share of a day's slot the bar covers; the rest is the gap between days
STACK_ORDER = ("approved", "denied", "open")  # bottom to top


@dataclass(frozen=True)
class Segment:
    kind: str
    count: int
    y: float
    height: float


@dataclass(frozen=True)
class Bar:
    x: float
    width: float
    label: str  # e.g. "Nov 3: 4 approved, 1 denied, 0 in progress"
    segments: list[Segment] = field(default_factory=list)


@dataclass(frozen=True)
class Tick:
    position: float
    text: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    plot_left: int
    plot_right: int
    plot_top: int
    plot_bottom: int
    bars: list[Bar]
    y_ticks: list[Tick]
    x_ticks: list[Tick]


def nice_step(maximum: int, max_ticks: int = 4) -> int:
    """The smallest step of the form 1, 2 or 5 x 10^k that covers `maximum` in at most `max_ticks` steps."""
    if maximum <= max_ticks:
        return 1
    raw = maximum / max_ticks
    magnitude = 10 ** math.floor(math.log10(raw))
    for multiple in (1, 2, 5, 10):
        if multiple * magnitude >= raw:
            return int(multiple * magnitude)
    return int(10 * magnitude)  # unreachable: 10 x magnitude always covers raw


def usage_chart(usage: Usage) -> Chart:
    plot_width = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
    plot_height = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    bottom = MARGIN_TOP + plot_height
    peak = max((day.total for day in usage.days), default=0)
    step = nice_step(max(peak, 1))
    top_value = step * max(1, math.ceil(peak / step))
    scale = plot_height / top_value
    slot = plot_width / max(len(usage.days), 1)
    bar_width = round(slot * BAR_FILL, 2)

    bars = []
    for index, day in enumerate(usage.days):
        x = round(MARGIN_LEFT + index * slot + (slot - bar_width) / 2, 2)
        y = bottom
        segments = []
        for kind in STACK_ORDER:
            count = getattr(day, kind)
            if count:
                height = round(count * scale, 2)
                y = round(y - height, 2)
                segments.append(Segment(kind=kind, count=count, y=y, height=height))
        label = f"{day.day:%b} {day.day.day}: {day.approved} approved, {day.denied} denied, {day.open} in progress"
        bars.append(Bar(x=x, width=bar_width, label=label, segments=segments))

    y_ticks = [
        Tick(position=round(bottom - value * scale, 2), text=str(value)) for value in range(0, top_value + 1, step)
    ]
    # A date under every 7th bar, counted back from today, so the newest day is always labelled.
    x_ticks = [
        Tick(position=round(MARGIN_LEFT + index * slot + slot / 2, 2), text=f"{day.day:%b} {day.day.day}")
        for index, day in enumerate(usage.days)
        if (len(usage.days) - 1 - index) % 7 == 0
    ]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        plot_left=MARGIN_LEFT,
        plot_right=WIDTH - MARGIN_RIGHT,
        plot_top=MARGIN_TOP,
        plot_bottom=bottom,
        bars=bars,
        y_ticks=y_ticks,
        x_ticks=x_ticks,
    )


FUNNEL_LABEL_WIDTH = 130  # the step names, left of the bars
FUNNEL_VALUE_WIDTH = 190  # the count and the drop-off, right of each bar
FUNNEL_ROW = 34
FUNNEL_BAR = 22


@dataclass(frozen=True)
class FunnelRow:
    key: str
    label: str
    y: float  # the bar's top
    text_y: float  # the row's text baseline (its middle)
    width: float  # the bar's width; 0 for a step nobody reached
    count: int
    title: str  # e.g. "Consent given: 8 (2 of 10 dropped off, 20.0 %)"


@dataclass(frozen=True)
class FunnelChart:
    width: int
    height: int
    bar_left: int
    track_width: int  # the whole bar's width: every session created
    value_x: float
    rows: list[FunnelRow]


def funnel_chart(funnel) -> FunnelChart:
    """Horizontal bars, one per step, as long as its share of the sessions created (dashboard.funnel.Funnel)."""
    plot_width = WIDTH - FUNNEL_LABEL_WIDTH - FUNNEL_VALUE_WIDTH
    rows = []
    for index, step in enumerate(funnel.steps):
        top = MARGIN_TOP + index * FUNNEL_ROW
        width = round(plot_width * step.count / funnel.created, 2) if funnel.created else 0
        title = f"{step.label}: {step.count}"
        if step.base:
            title += f" ({step.dropped} of {step.base} dropped off, {step.dropped_share * 100:.1f} %)"
        rows.append(
            FunnelRow(
                key=step.key,
                label=step.label,
                y=top,
                text_y=top + FUNNEL_BAR / 2,
                width=width,
                count=step.count,
                title=title,
            )
        )
    return FunnelChart(
        width=WIDTH,
        height=MARGIN_TOP * 2 + len(rows) * FUNNEL_ROW,
        bar_left=FUNNEL_LABEL_WIDTH,
        track_width=plot_width,
        value_x=FUNNEL_LABEL_WIDTH + plot_width + 10,
        rows=rows,
    )
