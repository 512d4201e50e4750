"""
Builds test/corpus/pii/corpus.jsonl (see PROVENANCE.md): labelled texts for
airgap-scrub from public sources. Deterministic (fixed seeds). Run from the
repository root with the sources named in PROVENANCE.md at hand:

  pip install faker==40.54.0 phonenumbers==9.0.43 (test-time only)
  python3 test/corpus/pii/build.py <presidio templates.txt> <pyap test dir> -

Each line: {"text", "entities": [{"kind", "start", "end", "value"}], "source"};
offsets are UTF-16-safe here because every text is BMP-only (checked).
"""
import json
import random
import re
import sys
from faker import Faker

templates_path, pyap_dir = sys.argv[1], sys.argv[2]
rng = random.Random(14)
out = []


class Builder:
    """A text assembled piece by piece, with labelled pieces."""

    def __init__(self):
        self.parts = []
        self.entities = []
        self.length = 0

    def add(self, text, kind=None):
        if kind:
            self.entities.append({"kind": kind, "start": self.length, "end": self.length + len(text), "value": text})
        self.parts.append(text)
        self.length += len(text)
        return self

    def done(self, source):
        text = "".join(self.parts)
        assert all(ord(c) < 0x10000 for c in text)
        out.append({"text": text, "entities": self.entities, "source": source})


def fill(template, source, values):
    """A presidio-research template with {{placeholder}}s; `values` maps a placeholder to (text, kind) or a callable."""
    b = Builder()
    pos = 0
    for m in re.finditer(r"\{\{(\w+)\}\}", template):
        b.add(template[pos:m.start()])
        v = values[m.group(1)]()
        for text, kind in v if isinstance(v, list) else [v]:
            b.add(text, kind)
        pos = m.end()
    b.add(template[pos:])
    b.done(source)


# ---------------------------------------------------------------- cards: brands' published test numbers
CARDS = {
    # Visa (incl. the 13-digit test number), Mastercard 5- and 2-series, Amex, Discover, Diners 14, JCB, UnionPay, Maestro, Mir, Elo, Hipercard, UATP, enRoute
    "Visa": ["4111111111111111", "4012888888881881", "4222222222222", "4242424242424242", "4000056655665556", "4917610000000000003"],
    "Mastercard": ["5555555555554444", "5105105105105100", "2223003122003222", "5200828282828210", "2221000000000009"],
    "American Express": ["378282246310005", "371449635398431", "378734493671000", "340000000000009"],
    "Discover": ["6011111111111117", "6011000990139424", "6445644564456445", "6011000000000004"],
    "Diners Club": ["30569309025904", "38520000023237", "36227206271667", "3056930009020004"],
    "JCB": ["3530111333300000", "3566002020360505", "3566111111111113"],
    "UnionPay": ["6200000000000005", "6205500000000000004", "6250941006528599"],
    "Maestro": ["6759649826438453", "6799990100000000019", "5018000000000009"],
    "Mir": ["2200000000000004", "2201382000000013"],
    "UATP": ["135410014004955"],
    "enRoute": ["201400000000009"],
}


def group_card(n, style):
    if style == "bare":
        return n
    sep = " " if style == "space" else "-"
    if len(n) == 15 and n[:2] in ("34", "37"):
        return sep.join([n[:4], n[4:10], n[10:]])
    if len(n) == 14:
        return sep.join([n[:4], n[4:10], n[10:]])
    return sep.join(n[i:i + 4] for i in range(0, len(n), 4))


TEMPLATES = [t.replace("\\n", "\n") for t in open(templates_path, encoding="utf-8").read().splitlines()]
CARD_TEMPLATES = [t for t in TEMPLATES if "{{credit_card_number}}" in t and not re.search(r"\{\{(?!credit_card_number|person|first_name|name_male|name_female|prefix_male|prefix_female|city)", t) and "\ufffd" not in t]
f_us = Faker("en_US")
f_us.seed_instance(14)
names = lambda: (f_us.name(), None)
generic = {
    "person": names, "first_name": lambda: (f_us.first_name(), None), "city": lambda: (f_us.city(), None),
    "name_male": lambda: (f_us.name_male(), None), "name_female": lambda: (f_us.name_female(), None),
    "prefix_male": lambda: ("Mr.", None), "prefix_female": lambda: ("Ms.", None), "country": lambda: (f_us.country(), None),
    "organization": lambda: (f_us.company(), None), "nationality": lambda: ("Italian", None),
}
i = 0
for brand, numbers in CARDS.items():
    for n in numbers:
        for style in ("bare", "space", "dash"):
            t = CARD_TEMPLATES[i % len(CARD_TEMPLATES)]
            i += 1
            fill(t, f"card test number ({brand}), presidio-research template", {**generic, "credit_card_number": lambda: (group_card(n, style), "CREDIT_CARD")})
for n in ("4012888888881881", "4222222222222", "378282246310005", "201400000000009"):
    for text_before, text_after in (("card#", " exp 04/29"), ("{\"card\":\"", "\",\"cvv\":\"123\"}"), ("Card no.: ", "."), ("cc=", "&exp=0429"), ("(", ")")):
        Builder().add(text_before).add(n, "CREDIT_CARD").add(text_after).done("card test number in markup")

# ---------------------------------------------------------------- SSNs (Faker en_US: valid structure)
SSN_TEMPLATES = ["His social security number is {{ssn}}", "Here's my SSN: {{ssn}}", "SSN {{ssn}} on the W-2.", "Employee {{person}}, SSN: {{ssn}}, start date Monday."]
for k in range(40):
    s = f_us.ssn()
    form = [s, s.replace("-", " "), s.replace("-", "")][k % 3]
    t = SSN_TEMPLATES[k % len(SSN_TEMPLATES)] if form != s.replace("-", "") else "SSN {{ssn}} verified."
    fill(t, "Faker en_US ssn, presidio-research template", {**generic, "ssn": lambda: (form, "SSN")})

# ---------------------------------------------------------------- emails
EMAIL_TEMPLATES = [t for t in TEMPLATES if "{{email}}" in t and "{{" not in t.replace("{{email}}", "").replace("{{person}}", "") and "\ufffd" not in t]
for k, loc in enumerate(["en_US", "en_GB", "de_DE", "fr_FR", "es_ES", "it_IT", "nl_NL", "pt_BR", "en_AU", "en_CA"] * 4):
    f = Faker(loc)
    f.seed_instance(100 + k)
    fill(EMAIL_TEMPLATES[k % len(EMAIL_TEMPLATES)], f"Faker {loc} email, presidio-research template", {**generic, "email": lambda: (f.email(), "EMAIL")})

# ---------------------------------------------------------------- phones: libphonenumber example numbers, every region
import phonenumbers  # noqa: E402
from phonenumbers import PhoneNumberFormat as PNF, PhoneNumberType as PNT  # noqa: E402

PHONE_TEMPLATES = [t for t in TEMPLATES if "{{phone_number}}" in t and "{{" not in t.replace("{{phone_number}}", "").replace("{{first_name}}", "") and "\ufffd" not in t]
regions = sorted(phonenumbers.SUPPORTED_REGIONS)
for k, region in enumerate(regions):
    for kind in (PNT.MOBILE, PNT.FIXED_LINE):
        n = phonenumbers.example_number_for_type(region, kind)
        if n is None:
            continue
        style = (k + (kind == PNT.MOBILE)) % 3
        text = phonenumbers.format_number(n, [PNF.INTERNATIONAL, PNF.E164, PNF.INTERNATIONAL][style])
        fill(PHONE_TEMPLATES[(k * 2 + kind) % len(PHONE_TEMPLATES)], f"libphonenumber example number ({region}), presidio-research template", {**generic, "phone_number": lambda: (text, "PHONE")})
# National formats, as people write them at home, for regions with a national trunk prefix or a fixed length
for k, region in enumerate(["GB", "DE", "FR", "IT", "ES", "NL", "BE", "CH", "AT", "SE", "AU", "NZ", "IN", "JP", "KR", "BR", "MX", "CA", "IE", "PL", "PT", "ZA", "SG", "HK"]):
    for kind in (PNT.MOBILE, PNT.FIXED_LINE):
        n = phonenumbers.example_number_for_type(region, kind)
        text = phonenumbers.format_number(n, PNF.NATIONAL)
        lead = ["Call me on ", "Tel. ", "Phone: ", "You can reach the office at ", "Mobile "][(k + kind) % 5]
        Builder().add(lead).add(text, "PHONE").add([".", " (office hours).", ", thanks!", "", " any time."][k % 5]).done(f"libphonenumber example number ({region}, national format)")

# ---------------------------------------------------------------- street addresses and postal codes
ADDRESS_TEMPLATES = [t for t in TEMPLATES if t.count("{{address}}") == 1 and "{{" not in t.replace("{{address}}", "").replace("{{first_name}}", "").replace("{{person}}", "").replace("{{city}}", "").replace("{{nationality}}", "").replace("{{organization}}", "") and "\ufffd" not in t]


def us_parts(f):
    return [(f.street_address(), "ADDRESS"), (", ", None), (f.city(), None), (", ", None), (f.state_abbr(include_territories=False), None), (" ", None), (f.zipcode(), "ZIP")]


def layouts(locale, f, k):
    """(pieces, layout name) of one address of `locale`: (text, kind) pairs."""
    if locale == "en_US":
        street, city, st, z = f.street_address(), f.city(), f.state_abbr(include_territories=False), f.zipcode_plus4() if k % 5 == 0 else f.zipcode()
        return [
            ([(street, "ADDRESS"), (", ", None), (city, None), (", ", None), (st, None), (" ", None), (z, "ZIP")], "one line"),
            ([(street, "ADDRESS"), ("\n", None), (city, None), (", ", None), (st, None), (" ", None), (z, "ZIP")], "two lines"),
            ([(street, "ADDRESS"), (",", None), (city, None), (",", None), (st, None), (",", None), (z, "ZIP")], "CSV"),
            ([(f"PO Box {f.building_number()}", "ADDRESS"), (", ", None), (city, None), (", ", None), (st, None), (" ", None), (z, "ZIP")], "PO box"),
            ([(f"PSC {f.numerify('####')}, Box {f.numerify('####')}", "ADDRESS"), ("\n" if k % 2 else ", ", None), (f"APO {f.military_state()}", None), (" ", None), (f.zipcode(), "ZIP")], "military APO"),
            ([(f"Unit {f.numerify('####')} Box {f.numerify('####')}", "ADDRESS"), ("\n" if k % 2 else ", ", None), (f"DPO {f.military_state()}", None), (" ", None), (f.zipcode(), "ZIP")], "military DPO"),
            ([(f"{f.military_ship()} {f.last_name()}", "ADDRESS"), ("\n" if k % 2 else ", ", None), (f"FPO {f.military_state()}", None), (" ", None), (f.zipcode(), "ZIP")], "military FPO"),
        ][k % 7]
    if locale == "en_GB":
        street, city, pc = f.street_address(), f.city(), f.postcode()
        return [([(street, "ADDRESS"), (", ", None), (city, None), (", ", None), (pc, "ZIP")], "one line"), ([(street, "ADDRESS"), ("\n", None), (city, None), ("\n", None), (pc, "ZIP")], "three lines")][k % 2]
    if locale == "en_CA":
        street, city, pr, pc = f.street_address(), f.city(), f.province_abbr(), f.postalcode()
        return [([(street, "ADDRESS"), (", ", None), (city, None), (", ", None), (pr, None), (" ", None), (pc, "ZIP")], "one line"), ([(street, "ADDRESS"), ("\n", None), (city, None), (" ", None), (pr, None), ("  ", None), (pc, "ZIP")], "two lines")][k % 2]
    if locale == "en_AU":
        street, city, st, pc = f.street_address(), f.city(), f.state_abbr(), f.postcode()
        return [([(street, "ADDRESS"), (", ", None), (city, None), (" ", None), (st, None), (" ", None), (pc, "ZIP")], "one line"), ([(street, "ADDRESS"), ("\n", None), (city, None), (" ", None), (st, None), (" ", None), (pc, "ZIP")], "two lines")][k % 2]
    if locale == "de_DE":
        street, city, pc = f.street_address(), f.city(), f.postcode()
        return [([(street, "ADDRESS"), (", ", None), (pc, "ZIP"), (" ", None), (city, None)], "one line"), ([(street, "ADDRESS"), ("\n", None), (pc, "ZIP"), (" ", None), (city, None)], "two lines")][k % 2]
    raise ValueError(locale)


for locale, count in (("en_US", 70), ("en_GB", 24), ("en_CA", 24), ("en_AU", 24), ("de_DE", 24)):
    f = Faker(locale)
    f.seed_instance(1400 + count)
    for k in range(count):
        pieces, layout = layouts(locale, f, k)
        if k % 3 == 0:
            b = Builder().add(["Ship to:\n", "Address: ", "Mailing address\n", "Lieferadresse: " if locale == "de_DE" else "Deliver to "][k % 4])
            for text, kind in pieces:
                b.add(text, kind)
            b.add(["", "\nThanks!", ".", " (leave at the door)"][k % 4]).done(f"Faker {locale} address, {layout}")
        else:
            fill(ADDRESS_TEMPLATES[k % len(ADDRESS_TEMPLATES)], f"Faker {locale} address ({layout}), presidio-research template", {**generic, "address": lambda: pieces})


# pyap's own test streets (US and GB parsers), in sentences
def pyap_cases(path, fn):
    src = open(path, encoding="utf-8").read()
    i = src.index(f"def {fn}(")
    j = src.rindex("@pytest.mark.parametrize", 0, i)
    return [(m.group(2).strip().rstrip(",").strip(), m.group(3) == "True") for m in re.finditer(r"\(\s*([\"'])(.*?)\1\s*,\s*(True|False)\s*\)", src[j:i])]


seen = set()
streets = pyap_cases(f"{pyap_dir}/test_parser_us.py", "test_full_street_positive") + pyap_cases(f"{pyap_dir}/test_parser_gb.py", "test_full_street")
for k, (street, positive) in enumerate(streets):
    # A street name without a house number ("Corn St") locates no building: not an address to redact here.
    if not positive or street in seen or not re.search(r"\d|\b(?:One|Two|Three|Four|Five|Six|Seven|Eight|Nine|Ten|Hundred)\b", street):
        continue
    seen.add(street)
    fill(ADDRESS_TEMPLATES[(k * 7) % len(ADDRESS_TEMPLATES)], "pyap test street (US/GB), presidio-research template", {**generic, "address": lambda: (street, "ADDRESS")})
for k, (box, positive) in enumerate(pyap_cases(f"{pyap_dir}/test_parser_us.py", "test_po_box_positive")):
    if positive:
        Builder().add("Send the forms to ").add(box.strip(), "ADDRESS").add(" please.").done("pyap test PO box")
# pyap's negative full addresses: nothing to redact
for text, positive in pyap_cases(f"{pyap_dir}/test_parser_us.py", "test_full_address"):
    if not positive:
        Builder().add(f"Item: {text}").done("pyap negative address (hard negative)")

# ---------------------------------------------------------------- hard negatives: numbers that are not PII
f = Faker("en_US")
f.seed_instance(77)
NEGATIVES = []
for k in range(60):
    NEGATIVES.append([
        lambda: f"Order #{f.numerify('#######')} shipped on {f.date()} via tracking {f.numerify('1Z###########')}.",
        lambda: f"Invoice {f.numerify('INV-#####')} totals ${f.numerify('#,###')}.{f.numerify('##')} due {f.date()}.",
        lambda: f"Build {f.numerify('#.##.###')} passed {f.numerify('####')} tests in {f.numerify('##')} minutes.",
        lambda: f"Server {f.ipv4_private()} answered in {f.numerify('###')} ms at {f.time()}.",
        lambda: f"ISBN {f.isbn13()} is out of stock; {f.numerify('##')} copies on order.",
        lambda: f"The meeting room holds {f.numerify('##')} people; the budget is {f.numerify('#####')} EUR for {f.year()}.",
        lambda: f"Request id {f.uuid4()} took {f.numerify('####')} ms.",
        lambda: f"Timestamp {f.numerify('17##########')} ms, offset {f.numerify('#####')}.",
        lambda: f"Population of the town grew from {f.numerify('##,###')} in {f.year()} to {f.numerify('##,###')}.",
        lambda: f"Flight {f.bothify('??')}{f.numerify('####')} leaves gate {f.numerify('##')} at {f.time()}.",
        lambda: f"Reference {f.numerify('################')} (not a card: Luhn fails) was rejected.",
        lambda: f"Chapter {f.numerify('##')}, page {f.numerify('###')}: the {f.numerify('####')} census.",
    ][k % 12]())
for text in NEGATIVES:
    if text.startswith("Reference "):
        digits = re.search(r"\d{16}", text).group(0)
        total = sum(int(c) if i % 2 == len(digits) % 2 else (int(c) * 2 - 9 if int(c) * 2 > 9 else int(c) * 2) for i, c in enumerate(digits))
        if total % 10 == 0:
            continue
    Builder().add(text).done("Faker-generated hard negative")

rng.shuffle(out)
with open("test/corpus/pii/corpus.jsonl", "w", encoding="utf-8") as fh:
    for r in out:
        fh.write(json.dumps(r, ensure_ascii=False) + "\n")
counts = {}
for r in out:
    for e in r["entities"]:
        counts[e["kind"]] = counts.get(e["kind"], 0) + 1
print(len(out), "texts", counts, sum(1 for r in out if not r["entities"]), "negatives")
