"""How an id is written: canonical UUID text only."""

from uuid import UUID, uuid4

import pytest

from core.ids import id_or_none, is_id

ID = "0b0e3b9c-2f6a-4c9e-9a53-6a4f3c1d2e7f"


def test_canonical_text_in_either_case_is_an_id():
    assert is_id(ID) and is_id(ID.upper())
    assert id_or_none(ID.upper()) == UUID(ID)
    given = uuid4()
    assert id_or_none(given) is given


@pytest.mark.parametrize("text", [
    ID.replace("-", ""), f"{{{ID}}}", f"urn:uuid:{ID}", f" {ID}", f"{ID}\n", f"{ID}?x=1",
    f"../libraries/{ID}", ID[:-1] + "g", "", None, 42])
def test_anything_else_is_not(text):
    assert not is_id(text) and id_or_none(text) is None
