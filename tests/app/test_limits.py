"""The explorer's limits from the environment: the forms a server's admin writes, and a value that is not one
(said in the log at import, and by ``loe-viz explore`` before it serves)."""

from __future__ import annotations

import logging

import pytest

from loe_viz.app import limits
from loe_viz.app.limits import _env_value, environment_problems, parse_amount


@pytest.mark.parametrize("text, size, expected", [
    ("200000", False, 200_000), ("200_000", False, 200_000), ("2e5", False, 200_000), ("4.0", False, 4),
    (" 12 ", False, 12), ("1e9", True, 10**9), ("8TB", True, 8 * 2**40), ("8TiB", True, 8 * 2**40),
    ("4GiB", True, 4 * 2**30), ("4 gb", True, 4 * 2**30), ("1.5KiB", True, 1536), ("512", True, 512),
])
def test_parse_amount_reads_the_forms_admins_write(text, size, expected):
    assert parse_amount(text, size=size) == expected


@pytest.mark.parametrize("text, size, message", [
    ("abc", False, "expected a whole number >= 1"),
    ("-5", False, "expected a whole number >= 1"),
    ("4.5", False, "expected a whole number >= 1"),
    ("0", False, "expected a whole number >= 1"),
    ("1e999", False, "expected a whole number >= 1, below 2**63"),
    ("4XB", True, "expected a size in bytes above 0, such as 4GiB or 4e9"),
    ("0GiB", True, "expected a size in bytes above 0, such as 4GiB or 4e9"),
    ("2**30", True, "expected a size in bytes above 0, such as 4GiB or 4e9"),
    ("1.5", True, "expected a size in bytes above 0, such as 4GiB or 4e9, a whole number of bytes"),  # was 1
    ("0.5", True, "expected a size in bytes above 0, such as 4GiB or 4e9, a whole number of bytes"),
])
def test_parse_amount_refuses_with_what_it_expected(text, size, message):
    with pytest.raises(ValueError) as info:
        parse_amount(text, size=size)
    assert str(info.value) == message


def test_a_bad_limit_is_logged_with_the_value_in_force(monkeypatch, caplog):
    monkeypatch.setenv("LOE_VIZ_MAX_N", "-5")
    monkeypatch.setenv("LOE_VIZ_MAX_BYTES", "4XB")
    monkeypatch.setenv("LOE_VIZ_MAX_PAGES_PER_ADDRESS", "abc")
    with caplog.at_level(logging.WARNING, logger="loe_viz.app.limits"):
        assert _env_value("LOE_VIZ_MAX_N", 200_000) == 200_000
        assert _env_value("LOE_VIZ_MAX_BYTES", 2 * 2**30) == 2 * 2**30
        assert _env_value("LOE_VIZ_MAX_PAGES_PER_ADDRESS", 0) == 0
    assert [r.getMessage() for r in caplog.records] == [
        "LOE_VIZ_MAX_N='-5': expected a whole number >= 1; using the default, 200,000",
        "LOE_VIZ_MAX_BYTES='4XB': expected a size in bytes above 0, such as 4GiB or 4e9; using the default, "
        "2,147,483,648 (2.0 GiB)",
        "LOE_VIZ_MAX_PAGES_PER_ADDRESS='abc': expected a whole number >= 0; using the default, 0 (no limit)",
    ]
    assert environment_problems() == [
        "LOE_VIZ_MAX_N='-5': expected a whole number >= 1",
        "LOE_VIZ_MAX_BYTES='4XB': expected a size in bytes above 0, such as 4GiB or 4e9",
        "LOE_VIZ_MAX_PAGES_PER_ADDRESS='abc': expected a whole number >= 0",
    ]


def test_good_limits_are_read_without_a_word(monkeypatch, caplog):
    for name, value in [("LOE_VIZ_MAX_N", "1e6"), ("LOE_VIZ_MAX_D", "30.0"), ("LOE_VIZ_MAX_COLUMNS", ""),
                        ("LOE_VIZ_MAX_BYTES", "8TB"), ("LOE_VIZ_MAX_PAGES_PER_ADDRESS", "0")]:
        monkeypatch.setenv(name, value)
    with caplog.at_level(logging.WARNING, logger="loe_viz.app.limits"):
        assert _env_value("LOE_VIZ_MAX_N", 200_000) == 10**6
        assert _env_value("LOE_VIZ_MAX_D", 20) == 30
        assert _env_value("LOE_VIZ_MAX_COLUMNS", 1_000) == 1_000  # empty: not set
        assert _env_value("LOE_VIZ_MAX_BYTES", 2 * 2**30) == 8 * 2**40
        assert _env_value("LOE_VIZ_MAX_PAGES_PER_ADDRESS", 0) == 0  # 0, the default: no limit
    assert caplog.records == [] and environment_problems() == []
    assert set(limits.ENVIRONMENT) == {"LOE_VIZ_MAX_N", "LOE_VIZ_MAX_D", "LOE_VIZ_MAX_COLUMNS", "LOE_VIZ_MAX_BYTES",
                                       "LOE_VIZ_MAX_PAGES_PER_ADDRESS"}
