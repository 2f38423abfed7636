"""The published statement's comparison of the sets at equal ages follows from its own tables.

A reader can check each set's share at the pooled age mix, and the gap between the sets with its interval,
from the counts printed per five-year band; this test does exactly that on docs/age-assurance.md.
"""

import math
import re
from pathlib import Path

STATEMENT = Path(__file__).resolve().parents[2] / "docs" / "age-assurance.md"
HEADING = "### Fairness at equal ages: adults sent to a document, by set and age"
GAP = re.compile(
    r"Largest gap between the sets with at least \d+ such adults \((?P<sets>[^)]*)\): "
    r"(?P<measured>[\d.]+) points \(95 % interval (?P<m_low>-?[\d.]+) to (?P<m_high>-?[\d.]+)\) as measured, "
    r"(?P<mix>[\d.]+) points \(95 % interval (?P<x_low>-?[\d.]+) to (?P<x_high>-?[\d.]+)\) at the pooled age mix\."
)


def _blocks() -> dict[int, str]:
    section = STATEMENT.read_text().split(HEADING)[1].split("\n### ")[0]
    return {
        int(limit): block for limit, block in re.findall(r"Age limit (\d+):\n\n(.*?)(?=\nAge limit |\Z)", section, re.S)
    }


def _table(block: str) -> tuple[list[str], dict[str, list[str]]]:
    lines = [line for line in block.splitlines() if line.startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")][1:]
    rows = {}
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows[cells[0]] = cells[1:]
    return header, rows


def _count(cell: str) -> tuple[int, int]:
    done, total = cell.split(" = ")[0].split("/")
    return int(done), int(total)


def test_each_sets_share_at_the_pooled_age_mix_and_the_gap_follow_from_the_band_counts():
    blocks = _blocks()
    assert sorted(blocks) == [13, 16, 18, 21]
    for limit, block in blocks.items():
        header, rows = _table(block)
        bands = [name for name in rows if re.fullmatch(r"\d+-\d+", name)]
        assert header[-1] == "all" and len(bands) >= 3, limit
        pooled = [_count(rows[band][-1])[1] for band in bands]
        weights = [total / sum(pooled) for total in pooled]
        at_mix = {}
        for column, name in enumerate(header[:-1]):
            counts = [_count(rows[band][column]) for band in bands]
            assert sum(total for _, total in counts) == _count(rows["as measured"][column])[1], (limit, name)
            if all(total for _, total in counts):
                rates = [done / total for done, total in counts]
                rate = sum(w * r for w, r in zip(weights, rates))
                variance = sum(w * w * r * (1 - r) / total for w, r, (_, total) in zip(weights, rates, counts))
                at_mix[name] = (rate, variance)
                assert rows["at the pooled age mix"][column] == f"{100 * rate:.1f} %", (limit, name)

        gap = GAP.search(block)
        assert gap, limit
        compared = gap["sets"].split(", ")
        measured = {}
        for name in compared:
            done, total = _count(rows["as measured"][header.index(name)])
            measured[name] = (done / total, done / total * (1 - done / total) / total)
        for rates, (value, low, high) in (
            (measured, ("measured", "m_low", "m_high")),
            ({name: at_mix[name] for name in compared}, ("mix", "x_low", "x_high")),
        ):
            top, bottom = max(rates.values()), min(rates.values())
            difference, margin = top[0] - bottom[0], 1.959964 * math.sqrt(top[1] + bottom[1])
            assert float(gap[value]) == round(100 * difference, 1), (limit, value)
            assert (float(gap[low]), float(gap[high])) == (
                round(100 * (difference - margin), 1),
                round(100 * (difference + margin), 1),
            ), (limit, value)
