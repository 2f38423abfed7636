"""The README as a newcomer's front door: its opening is the two commands, it says what the test command does
to a machine and links the testing page, its table of pages is the documentation site's nav, and every pointer
to a section of the README names one it has."""

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()


def nav_pages(nav) -> list[tuple[str, str]]:
    """(title, file) of every page of mkdocs.yml's nav, in its order."""
    pages = []
    for entry in nav:
        for title, target in entry.items():
            pages += nav_pages(target) if isinstance(target, list) else [(title, target)]
    return pages


def test_the_readmes_table_lists_every_page_of_the_site_in_the_navs_order_and_titles():
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text())["nav"]
    table = re.findall(r"^\| \[([^\]]+)\]\(docs/([^)]+)\) \|", README, re.M)

    assert table == [page for page in nav_pages(nav) if page[1] != "index.md"]


def test_every_pointer_to_a_readme_section_names_one_it_has():
    headings = set(re.findall(r"^#+ (.+)$", README, re.M))
    anchors = {re.sub(r"[^\w\- ]", "", heading).strip().lower().replace(" ", "-") for heading in headings}
    sources = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md")), *sorted((REPO / "deploy").glob("*example"))]
    for source in sources:
        text = source.read_text()
        for section in re.findall(r"README(?:'s|,) \"([^\"]+)\"", text):
            assert section in headings, f"{source.name} points at the README's {section!r}, which it does not have"
        for anchor in re.findall(r"README\.md#([\w-]+)", text):
            assert anchor in anchors, f"{source.name} points at README.md#{anchor}, which it does not have"


def test_the_opening_is_the_two_commands():
    opening = re.search(r"```sh\n(.*?)```", README, re.S)[1]

    assert [line.split()[0] for line in opening.splitlines()] == ["scripts/demo", "scripts/test"]


def test_it_says_what_the_test_command_does_to_a_machine_and_how_to_keep_it_off_shared_servers():
    section = README[README.index("## What the test command does") :]
    section = section[: section.index("\n## ", 1)]

    assert "[Testing](docs/testing.md)" in section
    for needed in (
        "apt",
        "PostgreSQL",
        "Redis",
        "AV_TEST_FAULT_PORTS",
        "AV_TEST_CONTAINERS",
        "DATABASE_URL",
        "REDIS_URL",
    ):
        assert needed in section, needed
