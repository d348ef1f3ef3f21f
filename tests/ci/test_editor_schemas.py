"""The JSON Schemas shipped for editors: made from the loaders' own tables, shipped as
written, and in agreement with the loaders on the bundled files and on broken ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from sparsroof.ci.budget_schema import budget_json_schema
from sparsroof.hardware.spec_schema import spec_json_schema

jsonschema = pytest.importorskip("jsonschema")

ROOT = Path(__file__).resolve().parents[2]
SCHEMAS = ROOT / "sparsroof" / "schemas"


@pytest.mark.parametrize("name,make", [("spec", spec_json_schema),
                                       ("budget", budget_json_schema)])
def test_the_shipped_schema_is_the_generated_one(name: str, make: object) -> None:
    shipped = json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))
    assert shipped == make()  # type: ignore[operator]
    jsonschema.Draft202012Validator.check_schema(shipped)


@pytest.mark.parametrize("path", sorted((ROOT / "hwspecs").glob("*.yaml")), ids=lambda p: p.name)
def test_every_bundled_spec_validates(path: Path) -> None:
    jsonschema.validate(yaml.safe_load(path.read_text(encoding="utf-8")), spec_json_schema())


def test_the_example_budget_validates() -> None:
    doc = yaml.safe_load((ROOT / "examples" / "budgets.yaml").read_text(encoding="utf-8"))
    jsonschema.validate(doc, budget_json_schema())


def test_what_the_loaders_refuse_the_schemas_refuse_too() -> None:
    spec = yaml.safe_load((ROOT / "hwspecs" / "a100-80gb.yaml").read_text(encoding="utf-8"))
    for broken in ({**spec, "memroy": []},                                   # a misspelt key
                   {**spec, "kind": "fpga"},                                 # an unknown kind
                   {**spec, "launch_overhead": {"value": "1 us"}},           # no source
                   {**spec, "network": {"value": "1 GB/s", "source": "x", "kind": "guess"}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(broken, spec_json_schema())
    budget = yaml.safe_load((ROOT / "examples" / "budgets.yaml").read_text(encoding="utf-8"))
    budget["checks"][0]["limits"]["max_sol_latncy"] = "1 us"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(budget, budget_json_schema())
