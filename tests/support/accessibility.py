"""Accessibility checks in the browser: axe-core's WCAG rules on the page as it is, and keyboard-only moves.

axe-core is installed by scripts/test (scripts/install_axe_core.py: pinned, integrity-checked). Pages
are checked in a context made with `bypass_csp=True`, since the flow's CSP rightly refuses the
injected script.
"""

from pathlib import Path

from playwright.sync_api import Page

AXE_SCRIPT = Path(__file__).resolve().parents[2] / ".axe-core" / "axe-4.14.1.min.js"
WCAG_22_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
BLOCKING = ("serious", "critical")

_RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                      nodes: v.nodes.map(n => n.target.join(" ")).slice(0, 5)}));
}"""


def axe_violations(page: Page) -> list[dict]:
    """axe-core's violations of WCAG 2.2 A/AA of serious or critical impact on the page as it is now."""
    if not AXE_SCRIPT.exists():
        raise AssertionError(f"{AXE_SCRIPT} is missing: run scripts/test (or scripts/install_axe_core.py)")
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_SCRIPT))
    return [v for v in page.evaluate(_RUN_AXE, WCAG_22_AA) if v["impact"] in BLOCKING]


def tab_to(page: Page, name: str, *, presses: int = 40) -> None:
    """Press Tab until the focused element's text or label contains `name` (what a keyboard user does)."""
    for _ in range(presses):
        page.keyboard.press("Tab")
        focused = page.evaluate("""() => { const e = document.activeElement;
            return e ? (e.getAttribute('aria-label') || e.innerText || e.value || '') : ''; }""")
        if name in focused:
            return
    raise AssertionError(f"{name!r} cannot be reached with the Tab key")
