"""
Builds test/corpus/pii-documents/corpus.jsonl (see PROVENANCE.md): messy labelled documents for airgap-scrub (support
tickets, CSV/TSV exports, e-mail threads with quoted replies, form dumps, JSON records, logs) with hard negatives
(identifiers, versions, timestamps, IMEIs, tracking numbers, IPs, ISBNs, UUIDs, amounts) that must survive.
Deterministic (fixed seeds). Run from the repository root:

  pip install mimesis==22.2.0 faker==40.63.0 phonenumbers==9.0.43   (build-time only)
  python3 test/corpus/pii-documents/build.py > test/corpus/pii-documents/corpus.jsonl

Each line: {"id", "genre", "template", "split", "text", "entities": [{kind, start, end, value}],
"negatives": [{kind, start, end, value}], "source"}. `split` is fixed: "kept-aside" for one template of every genre
(chosen by the SHA-1 of its name) and for a fifth of the other documents (by the SHA-1 of their id); "tuning" for
the rest. Offsets are UTF-16 code units (every text is in the BMP: checked).
"""
import hashlib
import json
import random
import re
import sys

import phonenumbers
from faker import Faker
from mimesis import Address, Person
from mimesis.locales import Locale

SEED = 23
rng = random.Random(SEED)


# ---------------------------------------------------------------- document builder
class Doc:
    """A text assembled piece by piece; labelled pieces are entities (PII) or negatives (must stay)."""

    def __init__(self):
        self.parts, self.entities, self.negatives, self.length = [], [], [], 0

    def t(self, text):
        self.parts.append(text)
        self.length += len(text)
        return self

    def e(self, kind, text):
        self.entities.append({"kind": kind, "start": self.length, "end": self.length + len(text), "value": text})
        return self.t(text)

    def n(self, kind, text):
        self.negatives.append({"kind": kind, "start": self.length, "end": self.length + len(text), "value": text})
        return self.t(text)

    def piece(self, p):
        """A piece: a plain string, or (kind, text) with kind PII (upper case) or negative (NEG:kind)."""
        if isinstance(p, str):
            return self.t(p)
        kind, text = p
        return self.n(kind[4:], text) if kind.startswith("NEG:") else self.e(kind, text)

    def text(self):
        return "".join(self.parts)

    def quoted(self, prefix="> "):
        """This document as a quoted reply: every line prefixed, offsets moved accordingly."""
        text = self.text()
        lines, moved, at = [], [], 0  # moved[i]: where character i of the text is in the quoted text
        for line in text.split("\n"):
            p = prefix if line else prefix.rstrip()
            base = sum(len(x) + 1 for x in lines)
            moved.extend(base + len(p) + j for j in range(len(line) + 1))
            lines.append(p + line)
        q = Doc()
        q.parts = ["\n".join(lines)]
        q.length = len(q.parts[0])
        for src, dst in ((self.entities, q.entities), (self.negatives, q.negatives)):
            for x in src:
                dst.append({**x, "start": moved[x["start"]], "end": moved[x["end"] - 1] + 1})
        return q

    def append(self, other):
        for src, dst in ((other.entities, self.entities), (other.negatives, self.negatives)):
            for x in src:
                dst.append({**x, "start": x["start"] + self.length, "end": x["end"] + self.length})
        return self.t(other.text())


# ---------------------------------------------------------------- value generators
LOCALES = {"us": Locale.EN, "gb": Locale.EN_GB, "ca": Locale.EN_CA, "au": Locale.EN_AU, "de": Locale.DE}
ADDR = {k: Address(v, seed=SEED) for k, v in LOCALES.items()}
PEOPLE = Person(Locale.EN, seed=SEED)
FAKER = {loc: Faker(loc) for loc in ["en_IE", "en_NZ", "fr_FR", "es_ES", "it_IT", "nl_NL", "pl_PL"]}
for i, f in enumerate(FAKER.values()):
    f.seed_instance(SEED + i)

US_STATES = "AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY".split()
AU_STATES = ["NSW", "VIC", "QLD", "WA", "SA", "TAS", "ACT", "NT"]
UNITS = ["Apt 4B", "Apt. 12", "Suite 300", "Unit 7", "#204", "Ste 1100", "Floor 3"]


def name():
    return f"{PEOPLE.first_name()} {PEOPLE.last_name()}"


def email(full=None):
    if rng.random() < 0.5:
        return PEOPLE.email()
    first, last = (full or name()).lower().split(" ", 1)
    last = re.sub(r"[^a-z]", "", last)
    return f"{rng.choice([first + '.' + last, first[0] + last, first + '_' + last + str(rng.randint(1, 99))])}@{rng.choice(['example.com', 'mail.example.org', 'corp.example.net', 'outlook.example', 'example.co.uk'])}"


def us_street(unit=0.25):
    s = ADDR["us"].address()
    return s + (" " + rng.choice(UNITS) if rng.random() < unit else "")


def us_zip():
    z = ADDR["us"].zip_code()
    while z.startswith("000"):
        z = ADDR["us"].zip_code()
    return z + (f"-{rng.randint(1, 9999):04d}" if rng.random() < 0.15 else "")


def us_city():
    return ADDR["us"].city()


CA_FIRST = "ABCEGHJKLMNPRSTVXY"
CA_OTHER = "ABCEGHJKLMNPRSTVWXYZ"


def ca_postcode():
    return f"{rng.choice(CA_FIRST)}{rng.randint(0, 9)}{rng.choice(CA_OTHER)} {rng.randint(0, 9)}{rng.choice(CA_OTHER)}{rng.randint(0, 9)}"


UK_AREAS = ["SW1A", "EC1V", "WC2B", "N1", "E14", "M1", "B33", "LS6", "G2", "EH1", "CF10", "BS8", "NE1", "L3", "OX1", "CB2", "BT7", "SE10", "W1D", "NW3"]


def uk_postcode():
    return f"{rng.choice(UK_AREAS)} {rng.randint(0, 9)}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}{rng.choice('ABDEFGHJLNPQRSTUWXYZ')}"


UK_TOWNS = ["London", "Manchester", "Leeds", "Bristol", "Cardiff", "Glasgow", "Edinburgh", "Belfast", "Oxford", "Cambridge", "Liverpool", "Newcastle upon Tyne"]


def uk_street_typeless():
    """A UK street line whose name carries no separate street type (`138 Kingsway`, `4 Hillfoot`)."""
    base = ADDR["gb"].street_name()
    form = rng.choice([base, base + "gate", "The " + base, base + " " + rng.choice(["Broadway", "Parade"]), base + "way"])
    return f"{rng.randint(1, 240)} {form}"


def luhn_complete(prefix, length):
    digits = prefix + "".join(str(rng.randint(0, 9)) for _ in range(length - len(prefix) - 1))
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return digits + str((10 - total % 10) % 10)


def luhn_ok(digits):
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


# IIN ranges and lengths from the brands' public rules (ISO/IEC 7812 issuer ranges).
CARD_BRANDS = [
    ("visa", lambda: "4", [16, 16, 16, 13, 19]),
    ("mastercard", lambda: str(rng.randint(51, 55)), [16]),
    ("mastercard2", lambda: str(rng.randint(2221, 2720)), [16]),
    ("amex", lambda: rng.choice(["34", "37"]), [15]),
    ("discover", lambda: rng.choice(["6011", "65", "644"]), [16]),
    ("diners", lambda: rng.choice(["36", "300", "305", "38"]), [14]),
    ("jcb", lambda: str(rng.randint(3528, 3589)), [16]),
    ("maestro", lambda: rng.choice(["5018", "5020", "5038", "6304", "6759", "6761", "6763"]), [12, 13, 16, 19]),
    ("unionpay", lambda: "62" + str(rng.randint(2126, 2925))[1:], [16, 19]),
    ("mir", lambda: str(rng.randint(2200, 2204)), [16]),
]


def group(digits, sizes, sep):
    out, at = [], 0
    for s in sizes:
        out.append(digits[at : at + s])
        at += s
    if at < len(digits):
        out.append(digits[at:])
    return sep.join(out)


def card(brand=None, style=None):
    b = brand or rng.choice(CARD_BRANDS)
    n = rng.choice(b[2])
    digits = luhn_complete(b[1](), n)
    style = style or rng.choice(["bare", "space", "space", "dash", "brand"])
    if style == "bare":
        return digits
    sep = " " if style in ("space", "brand") else "-"
    if style == "brand":
        sizes = {15: [4, 6], 14: [4, 6], 13: [4, 3, 3], 12: [4, 4], 19: [4, 4, 4, 4]}.get(n, [4, 4, 4])
        if b[0] == "maestro" and n == 19:
            sizes = [4, 4, 4, 4]
        return group(digits, sizes, sep)
    return group(digits, [4] * ((n - 1) // 4), sep)


def ssn(style=None):
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    g, s = rng.randint(1, 99), rng.randint(1, 9999)
    style = style or rng.choice(["dash", "dash", "space", "bare"])
    sep = {"dash": "-", "space": " ", "bare": ""}[style]
    return f"{area:03d}{sep}{g:02d}{sep}{s:04d}"


PHONE_REGIONS = ["US", "US", "US", "CA", "GB", "GB", "DE", "FR", "AU", "IE", "NL", "ES", "IT", "IN", "BR", "MX", "JP", "SE", "CH", "PL", "ZA", "NZ", "SG"]


def random_valid_number(region):
    """A valid number of `region`: random digits into the region's national number, checked by phonenumbers."""
    example = phonenumbers.example_number_for_type(region, rng.choice([phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE]))
    for _ in range(200):
        nsn = phonenumbers.national_significant_number(example)
        keep = rng.randint(1, 3)
        cand = nsn[:keep] + "".join(str(rng.randint(0, 9)) for _ in range(len(nsn) - keep))
        num = phonenumbers.parse("+" + str(example.country_code) + cand)
        if phonenumbers.is_valid_number(num) and cand != nsn:
            return num
    raise RuntimeError(region)


def phone(region=None, style=None):
    region = region or rng.choice(PHONE_REGIONS)
    num = random_valid_number(region)
    F = phonenumbers.PhoneNumberFormat
    style = style or rng.choice(["intl", "intl", "e164", "national", "national", "00", "dots", "rfc"])
    if style == "intl":
        return phonenumbers.format_number(num, F.INTERNATIONAL)
    if style == "e164":
        return phonenumbers.format_number(num, F.E164)
    if style == "00":
        return "00" + phonenumbers.format_number(num, F.INTERNATIONAL)[1:]
    if style == "dots" and region in ("US", "CA"):
        n = str(num.national_number)
        return f"{n[:3]}.{n[3:6]}.{n[6:]}"
    if style == "rfc" and region in ("US", "CA"):
        n = str(num.national_number)
        return f"+1-{n[:3]}-{n[3:6]}-{n[6:]}"
    return phonenumbers.format_number(num, F.NATIONAL)


def us_phone():
    return phone("US", rng.choice(["national", "dots", "rfc", "intl", "e164"]))


# ---------------------------------------------------------------- hard negatives
def neg_version():
    return rng.choice(
        [
            lambda: f"Chrome/{rng.randint(110, 131)}.0.{rng.randint(5000, 6900)}.{rng.randint(10, 260)}",
            lambda: f"Firefox/{rng.randint(110, 132)}.0",
            lambda: f"v{rng.randint(0, 12)}.{rng.randint(0, 40)}.{rng.randint(0, 30)}",
            lambda: f"{rng.randint(10, 11)}.0.{rng.randint(19041, 26100)}.{rng.randint(1000, 5000)}",
            lambda: f"Version/{rng.randint(14, 18)}.{rng.randint(0, 6)} Safari/605.1.15",
            lambda: f"{rng.randint(1, 9)}.{rng.randint(0, 20)}.{rng.randint(0, 99)}-rc.{rng.randint(1, 5)}",
            lambda: f"Edg/{rng.randint(110, 131)}.0.{rng.randint(1000, 2900)}.{rng.randint(10, 99)}",
            lambda: f"build {rng.randint(20000, 26999)}.{rng.randint(1000, 4999)}",
        ]
    )()


def user_agent():
    v = f"{rng.randint(110, 131)}.0.{rng.randint(5000, 6900)}.{rng.randint(10, 260)}"
    return f"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{v} Safari/537.36"


def neg_id():
    y = rng.randint(2019, 2026)
    return rng.choice(
        [
            lambda: f"INV-{y}-{rng.randint(1, 999999):06d}",
            lambda: f"ORD-{y}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}-{rng.randint(1000, 9999)}",
            lambda: f"TKT-{rng.randint(100000, 999999)}",
            lambda: f"PO-{rng.randint(4500000000, 4599999999)}",
            lambda: f"{rng.randint(100, 999)}-{rng.randint(1000000, 9999999)}-{rng.randint(1000000, 9999999)}",
            lambda: f"CASE-{rng.randint(10000000, 99999999)}",
            lambda: f"RMA{y}{rng.randint(10000, 99999)}",
            lambda: f"REF/{y}/{rng.randint(1, 99999):05d}",
            lambda: f"#{rng.randint(10000000, 99999999)}",
            lambda: f"SR{rng.randint(100000000, 999999999)}",
            lambda: f"INC{rng.randint(1000000, 9999999)}",
            lambda: f"CUST-{rng.randint(10000, 99999)}-{rng.choice('ABCDEFGH')}{rng.randint(10, 99)}",
        ]
    )()


MONTHS = "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()


def neg_timestamp():
    y, mo, d, h, mi, s = rng.randint(2019, 2026), rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59)
    return rng.choice(
        [
            lambda: f"{d:02d}.{mo:02d}.{y} {h:02d}:{mi:02d}",
            lambda: f"{y}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}Z",
            lambda: f"{y}-{mo:02d}-{d:02d}T{h:02d}:{mi:02d}:{s:02d}.{rng.randint(0, 999):03d}+02:00",
            lambda: f"{mo:02d}/{d:02d}/{y} {h % 12 + 1}:{mi:02d} {rng.choice(['AM', 'PM'])}",
            lambda: f"{d:02d}/{mo:02d}/{y} {h:02d}:{mi:02d}:{s:02d}",
            lambda: f"{y}-{mo:02d}-{d:02d} {h:02d}:{mi:02d}:{s:02d},{rng.randint(0, 999):03d}",
            lambda: f"{MONTHS[mo - 1]} {d}, {y} {h:02d}:{mi:02d}",
            lambda: f"{rng.randint(1577836800, 1790000000)}",
            lambda: f"{rng.randint(1577836800000, 1790000000000)}",
            lambda: f"{y}{mo:02d}{d:02d}{h:02d}{mi:02d}{s:02d}",
            lambda: f"{y}/{mo:02d}/{d:02d} {h:02d}:{mi:02d}",
            lambda: f"{d:02d}-{MONTHS[mo - 1]}-{y} {h:02d}:{mi:02d}:{s:02d}",
        ]
    )()


def imei(style=None):
    digits = luhn_complete(rng.choice(["35", "86", "49", "01", "99"]) + str(rng.randint(100000, 999999)), 15)
    style = style or rng.choice(["bare", "bare", "dash", "space"])
    if style == "dash":
        return f"{digits[:2]}-{digits[2:8]}-{digits[8:14]}-{digits[14]}"
    if style == "space":
        return f"{digits[:2]} {digits[2:8]} {digits[8:14]} {digits[14]}"
    return digits


def tracking():
    alnum = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
    return rng.choice(
        [
            lambda: "1Z" + "".join(rng.choice(alnum) for _ in range(6)) + "".join(str(rng.randint(0, 9)) for _ in range(10)),
            lambda: "".join(str(rng.randint(0, 9)) for _ in range(12)),
            lambda: group("".join(str(rng.randint(0, 9)) for _ in range(12)), [4, 4], " "),
            lambda: "".join(str(rng.randint(0, 9)) for _ in range(15)),
            lambda: group("94" + "".join(str(rng.randint(0, 9)) for _ in range(20)), [4, 4, 4, 4, 4], " "),
            lambda: "92" + "".join(str(rng.randint(0, 9)) for _ in range(20)),
            lambda: "".join(str(rng.randint(0, 9)) for _ in range(10)),
            lambda: "JJD" + "".join(str(rng.randint(0, 9)) for _ in range(18)),
            lambda: rng.choice(["RR", "LX", "CP", "EE"]) + "".join(str(rng.randint(0, 9)) for _ in range(9)) + rng.choice(["US", "GB", "DE", "CN"]),
        ]
    )()


def neg_ip():
    return rng.choice(
        [
            lambda: f"{rng.choice([10, 172, 192, 203, 198])}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
            lambda: f"2001:db8:{rng.randint(0, 0xffff):x}::{rng.randint(1, 0xffff):x}",
            lambda: f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}:{rng.randint(1024, 65535)}",
        ]
    )()


def ipv4():
    return f"{rng.randint(1, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"


def isbn():
    core = "978" + str(rng.randint(0, 1)) + "".join(str(rng.randint(0, 9)) for _ in range(8))
    total = sum(int(c) * (1 if i % 2 == 0 else 3) for i, c in enumerate(core))
    digits = core + str((10 - total % 10) % 10)
    return rng.choice([digits, f"{digits[:3]}-{digits[3]}-{digits[4:7]}-{digits[7:12]}-{digits[12]}"])


def uuid():
    h = "".join(rng.choice("0123456789abcdef") for _ in range(32))
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def amount():
    return rng.choice(
        [
            lambda: f"${rng.randint(1, 99999):,}.{rng.randint(0, 99):02d}",
            lambda: f"{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}",
            lambda: f"{rng.randint(1, 999)}.{rng.randint(100, 999)},{rng.randint(0, 99):02d} €",
            lambda: f"USD {rng.randint(100, 999999)}.00",
            lambda: f"£{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}",
        ]
    )()


def neg_any():
    kind, f = rng.choice(
        [("VERSION", neg_version), ("ID", neg_id), ("TIMESTAMP", neg_timestamp), ("IMEI", imei), ("TRACKING", tracking), ("IP", neg_ip), ("ISBN", isbn), ("UUID", uuid), ("AMOUNT", amount)]
    )
    return ("NEG:" + kind, f())


# ---------------------------------------------------------------- templates by genre
TEMPLATES = {}


def template(genre):
    def register(fn):
        TEMPLATES.setdefault(genre, []).append(fn)
        return fn

    return register


def us_address_block(d, sep=", "):
    d.e("ADDRESS", us_street()).t(sep + us_city() + ", " + rng.choice(US_STATES) + " ").e("ZIP", us_zip())


def uk_address_block(d, typeless=None):
    typeless = rng.random() < 0.5 if typeless is None else typeless
    d.e("ADDRESS", uk_street_typeless() if typeless else ADDR["gb"].address())
    d.t(rng.choice([", ", "\n"]) + rng.choice(UK_TOWNS) + rng.choice([" ", ", ", "\n"])).e("ZIP", uk_postcode())


# --- support tickets
@template("ticket")
def ticket_callback(d):
    who = name()
    d.t(f"Ticket ").n("ID", neg_id()).t(f" | opened ").n("TIMESTAMP", neg_timestamp()).t(f" | priority P{rng.randint(1, 4)}\n")
    d.t(f"Customer {who} called from ").e("PHONE", phone(style=rng.choice(["00", "intl", "national"])))
    d.t(" about invoice ").n("ID", neg_id()).t(". Wants the replacement shipped to\n")
    if rng.random() < 0.5:
        uk_address_block(d)
    else:
        us_address_block(d, "\n")
    d.t("\nBrowser: ").n("VERSION", user_agent()).t("\nLast order total ").n("AMOUNT", amount()).t(", parcel ").n("TRACKING", tracking()).t(".\n")
    d.t("Reply to ").e("EMAIL", email(who)).t(" once done.")


@template("ticket")
def ticket_device(d):
    d.t(f"Subject: phone stuck on boot after update ").n("VERSION", neg_version()).t("\n\n")
    d.t("Device IMEI ").n("IMEI", imei()).t(", serial ").n("ID", f"SN{rng.randint(10000000, 99999999)}").t(". Firmware ").n("VERSION", neg_version()).t(".\n")
    d.t("Customer can be reached on ").e("PHONE", phone()).t(" or ").e("PHONE", phone()).t(" (after ").n("TIMESTAMP", neg_timestamp()).t(").\n")
    d.t("Payment on file: ").e("CREDIT_CARD", card()).t(", last charge ").n("AMOUNT", amount()).t(" on ").n("TIMESTAMP", neg_timestamp()).t(".\n")
    d.t("Return label tracking ").n("TRACKING", tracking()).t(", RMA ").n("ID", neg_id()).t(".")


@template("ticket")
def ticket_billing(d):
    who = name()
    d.t(f"[{rng.choice(['Billing', 'Fraud', 'Disputes'])}] ").n("ID", neg_id()).t(f"\nReporter: {who} <").e("EMAIL", email(who)).t(">\n\n")
    d.t("Two cards were charged twice: ").e("CREDIT_CARD", card(style=rng.choice(["space", "brand"]))).t(rng.choice([" and ", ", ", " / "])).e("CREDIT_CARD", card(style=rng.choice(["dash", "bare"])))
    d.t(".\nAmounts ").n("AMOUNT", amount()).t(" and ").n("AMOUNT", amount()).t(", both on ").n("TIMESTAMP", neg_timestamp()).t(".\n")
    d.t("Billing address: ")
    us_address_block(d)
    d.t(f".\nSSN on the account: ").e("SSN", ssn(rng.choice(["dash", "space"]))).t(". Client IP ").n("IP", neg_ip()).t(".")


@template("ticket")
def ticket_delivery(d):
    d.t("Delivery complaint, order ").n("ID", neg_id()).t(" (").n("TIMESTAMP", neg_timestamp()).t(")\n")
    d.t("Carrier tracking: ").n("TRACKING", tracking()).t("\nThe courier left it at ")
    r = rng.random()
    if r < 0.4:
        d.e("ADDRESS", uk_street_typeless()).t(", " + rng.choice(UK_TOWNS) + " ").e("ZIP", uk_postcode())
    elif r < 0.7:
        d.e("ADDRESS", ADDR["ca"].address()).t(f", {ADDR['ca'].city()}, {rng.choice(['ON', 'QC', 'BC', 'AB'])} ").e("ZIP", ca_postcode())
    else:
        d.e("ADDRESS", ADDR["au"].address()).t(f", {ADDR['au'].city()} {rng.choice(AU_STATES)} ").e("ZIP", f"{rng.randint(2000, 7999)}")
    d.t(" instead of next door. Call me at ").e("PHONE", phone()).t(".\nISBN of the missing book: ").n("ISBN", isbn()).t(", qty 2, ").n("AMOUNT", amount()).t(".")


@template("ticket")
def ticket_identity(d):
    who = name()
    d.t(f"Identity check for {who}\nRequest id ").n("UUID", uuid()).t("\n")
    d.t("SSN given: ").e("SSN", ssn()).t("; DOB on file; phone ").e("PHONE", us_phone()).t(".\n")
    d.t("Lives at ").e("ADDRESS", us_street()).t(f", {us_city()}, {rng.choice(US_STATES)} ").e("ZIP", us_zip()).t(".\n")
    d.t("Agent app ").n("VERSION", neg_version()).t(", session from ").n("IP", neg_ip()).t(" at ").n("TIMESTAMP", neg_timestamp()).t(".")


@template("ticket")
def ticket_europe(d):
    f = FAKER[rng.choice(["fr_FR", "es_ES", "it_IT", "nl_NL", "pl_PL"])]
    d.t("Kunde meldet sich wegen Rechnung ").n("ID", neg_id()).t(" vom ").n("TIMESTAMP", neg_timestamp()).t(".\n")
    d.t("Lieferadresse: ").e("ADDRESS", ADDR["de"].address()).t(", ").e("ZIP", ADDR["de"].postal_code()).t(f" {ADDR['de'].city()}\n")
    d.t("Tel. ").e("PHONE", phone(rng.choice(["DE", "FR", "ES", "IT", "NL", "PL"]))).t(", E-Mail ").e("EMAIL", f.email()).t("\n")
    d.t("Sendungsnummer ").n("TRACKING", tracking()).t(", Betrag ").n("AMOUNT", amount()).t(".")


# --- CSV / TSV exports
def csv_cell(v, sep):
    return f'"{v}"' if sep in v or '"' in v else v


@template("csv")
def csv_customers(d):
    sep = rng.choice([",", ",", "\t", ";"])
    cols = ["id", "name", "email", "phone", "street", "city", "state", "zip", "amount", "created_at"]
    rng.shuffle(cols[2:8])
    d.t(sep.join(cols) + "\n")
    for _ in range(rng.randint(6, 14)):
        who = name()
        cells = {
            "id": ("NEG:ID", str(rng.randint(1000, 99999))),
            "name": who,
            "email": ("EMAIL", email(who)),
            "phone": ("PHONE", us_phone()),
            "street": ("ADDRESS", us_street(0.15)),
            "city": us_city(),
            "state": rng.choice(US_STATES),
            "zip": ("ZIP", us_zip()),
            "amount": ("NEG:AMOUNT", f"{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}"),
            "created_at": ("NEG:TIMESTAMP", neg_timestamp()),
        }
        for i, c in enumerate(cols):
            v = cells[c]
            if isinstance(v, tuple):
                q = sep in v[1]
                d.t('"' if q else "").piece(v).t('"' if q else "")
            else:
                d.t(csv_cell(v, sep))
            d.t(sep if i < len(cols) - 1 else "\n")


@template("csv")
def csv_orders_short(d):
    """An export of state, zip and amount columns (with or without a header)."""
    header = rng.random() < 0.6
    if header:
        d.t("state,zip,total,order_ref\n")
    for _ in range(rng.randint(8, 20)):
        d.t(rng.choice(US_STATES) + ",").e("ZIP", us_zip()[:5]).t(",").n("AMOUNT", f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}").t(",").n("ID", neg_id()).t("\n")


@template("csv")
def csv_hr(d):
    sep = rng.choice([",", "\t"])
    d.t(sep.join(["employee_id", "full_name", "ssn", "mobile", "home_address", "postcode", "start_date"]) + "\n")
    for _ in range(rng.randint(5, 12)):
        who = name()
        d.n("ID", f"E{rng.randint(10000, 99999)}").t(sep + who + sep).e("SSN", ssn(rng.choice(["bare", "bare", "dash"]))).t(sep)
        d.e("PHONE", us_phone()).t(sep)
        street = us_street(0.1)
        q = sep in street
        d.t('"' if q else "").e("ADDRESS", street).t('"' if q else "").t(sep).e("ZIP", us_zip()[:5]).t(sep).n("TIMESTAMP", neg_timestamp()).t("\n")


@template("csv")
def csv_payments(d):
    sep = rng.choice([",", ";", "|"])
    d.t(sep.join(["txn_id", "card_number", "exp", "amount", "currency", "device_imei", "ip"]) + "\n")
    for _ in range(rng.randint(5, 12)):
        d.n("ID", f"T{rng.randint(100000000, 999999999)}").t(sep).e("CREDIT_CARD", card(style=rng.choice(["bare", "bare", "space", "dash"])))
        d.t(sep + f"{rng.randint(1, 12):02d}/{rng.randint(26, 31)}" + sep).n("AMOUNT", f"{rng.randint(1, 9999)}.{rng.randint(0, 99):02d}").t(sep + rng.choice(["USD", "EUR", "GBP"]) + sep)
        d.n("IMEI", imei("bare")).t(sep).n("IP", ipv4()).t("\n")


@template("csv")
def csv_uk_contacts(d):
    d.t("Name,Phone,Address line 1,Town,Postcode\n")
    for _ in range(rng.randint(5, 12)):
        d.t(name() + ",").e("PHONE", phone(rng.choice(["GB", "GB", "IE"]), rng.choice(["national", "intl", "00"]))).t(",")
        d.e("ADDRESS", uk_street_typeless() if rng.random() < 0.5 else ADDR["gb"].address()).t("," + rng.choice(UK_TOWNS) + ",").e("ZIP", uk_postcode()).t("\n")


@template("csv")
def csv_shipping(d):
    d.t("shipment\tcarrier\ttracking\tphone\tzip\tweight_kg\n")
    for _ in range(rng.randint(6, 14)):
        d.n("ID", neg_id()).t("\t" + rng.choice(["UPS", "FedEx", "USPS", "DHL"]) + "\t").n("TRACKING", tracking()).t("\t")
        d.e("PHONE", us_phone()).t("\t").e("ZIP", us_zip()).t(f"\t{rng.randint(1, 40)}.{rng.randint(0, 9)}\n")


# --- e-mail threads with quoted replies
def mail_header(d, who):
    d.t(f"From: {who} <").e("EMAIL", email(who)).t(">\nDate: ").n("TIMESTAMP", neg_timestamp()).t("\nSubject: Re: order ").n("ID", neg_id()).t("\n\n")


def original_message(who):
    q = Doc()
    q.t("Hi,\n\nPlease send the documents to my new address:\n")
    r = rng.random()
    if r < 0.4:
        q.e("ADDRESS", us_street()).t("\n" + us_city() + ", " + rng.choice(US_STATES) + " ").e("ZIP", us_zip()).t("\n")
    elif r < 0.7:
        q.e("ADDRESS", uk_street_typeless()).t("\n" + rng.choice(UK_TOWNS) + "\n").e("ZIP", uk_postcode()).t("\n")
    else:
        q.e("ADDRESS", ADDR["gb"].address()).t("\n" + rng.choice(UK_TOWNS) + " ").e("ZIP", uk_postcode()).t("\n")
    q.t("\nMy mobile is ").e("PHONE", phone()).t(".\n\nThanks,\n" + who)
    return q


@template("email")
def email_reply(d):
    who, agent = name(), name()
    mail_header(d, agent)
    d.t("Hello,\n\nThanks, we updated your record. Your parcel ").n("TRACKING", tracking()).t(" leaves today.\n\n")
    d.t(f"On {rng.choice(['Mon', 'Tue', 'Fri'])}, ").n("TIMESTAMP", neg_timestamp()).t(f" {who} <").e("EMAIL", email(who)).t("> wrote:\n")
    d.append(original_message(who).quoted())


@template("email")
def email_nested(d):
    who, agent = name(), name()
    mail_header(d, who)
    d.t("See below, the card is ").e("CREDIT_CARD", card()).t(".\n\n")
    inner = Doc()
    inner.t(f"{agent} wrote on ").n("TIMESTAMP", neg_timestamp()).t(":\nCould you confirm the billing address and card?\n\n")
    inner.append(original_message(who).quoted())
    d.append(inner.quoted())


@template("email")
def email_forward(d):
    who = name()
    d.t("---------- Forwarded message ---------\nFrom: ").e("EMAIL", email(who)).t("\nDate: ").n("TIMESTAMP", neg_timestamp()).t("\n\n")
    body = Doc()
    body.t("Invoice ").n("ID", neg_id()).t(" is unpaid. Phone ").e("PHONE", phone(style="00")).t(".\nShip to: ")
    body.e("ADDRESS", us_street()).t(", " + us_city() + ", " + rng.choice(US_STATES) + " ").e("ZIP", us_zip()).t("\nSSN ").e("SSN", ssn("dash")).t("\n")
    d.append(body.quoted(rng.choice(["> ", ">"])))
    d.t("\n\nSent from my iPhone (iOS ").n("VERSION", f"{rng.randint(15, 18)}.{rng.randint(0, 6)}.{rng.randint(1, 3)}").t(")")


@template("email")
def email_signature(d):
    who = name()
    mail_header(d, who)
    d.t("Meeting moved to ").n("TIMESTAMP", neg_timestamp()).t(". Dial-in via the usual link.\n\n--\n" + who + "\n")
    d.t(rng.choice(["T: ", "Tel ", "Mobile: ", "M "])).e("PHONE", phone()).t("\n")
    d.t(rng.choice(["", "Office: "])).e("ADDRESS", ADDR["gb"].address() if rng.random() < 0.5 else uk_street_typeless()).t(", " + rng.choice(UK_TOWNS) + " ").e("ZIP", uk_postcode()).t("\n")
    d.t("Company no. ").n("ID", f"{rng.randint(1000000, 9999999):08d}").t(" | VAT GB ").n("ID", f"{rng.randint(100, 999)} {rng.randint(1000, 9999)} {rng.randint(10, 99)}")


@template("email")
def email_quoted_form(d):
    who = name()
    mail_header(d, who)
    d.t("Corrected details below.\n\n")
    q = Doc()
    q.t("Name: " + who + "\nPhone: ").e("PHONE", phone()).t("\nStreet: ").e("ADDRESS", us_street()).t("\nZIP: ").e("ZIP", us_zip()).t("\nOrder: ").n("ID", neg_id()).t("\n")
    d.append(q.quoted())


# --- form dumps
@template("form")
def form_colon(d):
    who = name()
    fields = [
        ("Full name", who),
        (rng.choice(["Phone", "Telephone", "Mobile", "Contact number"]), ("PHONE", phone())),
        (rng.choice(["Email", "E-mail address"]), ("EMAIL", email(who))),
        (rng.choice(["Street", "Address line 1", "Street address"]), ("ADDRESS", us_street())),
        ("City", us_city()),
        ("State", rng.choice(US_STATES)),
        (rng.choice(["ZIP", "Zip code", "Postal code"]), ("ZIP", us_zip())),
        (rng.choice(["SSN", "Social Security Number", "SSN (no dashes)"]), ("SSN", ssn(rng.choice(["bare", "dash"])))),
        ("Submitted", ("NEG:TIMESTAMP", neg_timestamp())),
        ("Form version", ("NEG:VERSION", neg_version())),
        ("Reference", ("NEG:ID", neg_id())),
    ]
    for k, v in fields:
        d.t(k + ": ").piece(v).t("\n")


@template("form")
def form_equals(d):
    who = name()
    pairs = [
        ("first_name", who.split()[0]),
        ("phone", ("PHONE", phone(style=rng.choice(["e164", "intl", "national"])))),
        ("email", ("EMAIL", email(who))),
        ("addr1", ("ADDRESS", us_street(0))),
        ("zip", ("ZIP", us_zip()[:5])),
        ("cc", ("CREDIT_CARD", card(style="bare"))),
        ("ts", ("NEG:TIMESTAMP", str(rng.randint(1577836800, 1790000000)))),
        ("ua_version", ("NEG:VERSION", neg_version())),
        ("ip", ("NEG:IP", neg_ip())),
    ]
    sep = rng.choice(["\n", "&", "; "])
    for i, (k, v) in enumerate(pairs):
        d.t(("" if i == 0 else sep) + k + "=").piece(v)


@template("form")
def form_device(d):
    d.t("DEVICE REGISTRATION\n-------------------\n")
    d.t("IMEI: ").n("IMEI", imei()).t("\nIMEI 2: ").n("IMEI", imei()).t("\nMEID: ").n("ID", f"{rng.randint(10**13, 10**14 - 1):x}".upper()).t("\n")
    d.t("Owner phone: ").e("PHONE", phone()).t("\nWarranty until: ").n("TIMESTAMP", neg_timestamp()).t("\nOS: ").n("VERSION", neg_version()).t("\n")
    d.t("Shipping tracking no: ").n("TRACKING", tracking()).t("\nSerial number: ").n("ID", str(rng.randint(10**11, 10**12 - 1))).t("\n")


@template("form")
def form_application(d):
    who = name()
    d.t(f"LOAN APPLICATION {rng.randint(1, 9)}/{rng.randint(10, 12)}\n\nApplicant ........ {who}\n")
    d.t("Social security .. ").e("SSN", ssn()).t("\nHome phone ....... ").e("PHONE", us_phone()).t("\nResidence ........ ").e("ADDRESS", us_street()).t("\n")
    d.t(f"                   {us_city()}, {rng.choice(US_STATES)} ").e("ZIP", us_zip()).t("\nEmployer phone ... ").e("PHONE", us_phone()).t("\n")
    d.t("Requested ........ ").n("AMOUNT", amount()).t("\nApplication no ... ").n("ID", neg_id()).t("\nReceived ......... ").n("TIMESTAMP", neg_timestamp()).t("\n")


@template("form")
def form_international(d):
    f = FAKER[rng.choice(["en_IE", "en_NZ"])]
    d.t("Registration form (export)\nname: " + f.name() + "\nstreet: ").e("ADDRESS", f.street_address()).t("\ntown: " + f.city() + "\n")
    d.t("phone: ").e("PHONE", phone(rng.choice(["IE", "NZ", "GB", "AU"]), rng.choice(["00", "intl", "national"]))).t("\nemail: ").e("EMAIL", f.email()).t("\n")
    d.t("card: ").e("CREDIT_CARD", card(style="brand")).t("\nreference: ").n("ID", neg_id()).t("\nsubmitted: ").n("TIMESTAMP", neg_timestamp()).t("\n")


# --- JSON records
def json_value(d, v, indent, level):
    pad = " " * (indent * (level + 1)) if indent else ""
    end_pad = " " * (indent * level) if indent else ""
    nl = "\n" if indent else ""
    if isinstance(v, dict):
        d.t("{" + nl)
        items = list(v.items())
        for i, (k, x) in enumerate(items):
            d.t(pad + json.dumps(k) + ":" + (" " if indent or rng.random() < 0.5 else ""))
            json_value(d, x, indent, level + 1)
            d.t(("," if i < len(items) - 1 else "") + nl)
        d.t(end_pad + "}")
    elif isinstance(v, list):
        d.t("[")
        for i, x in enumerate(v):
            json_value(d, x, indent, level + 1)
            if i < len(v) - 1:
                d.t(", ")
        d.t("]")
    elif isinstance(v, tuple):
        kind, text = v[0], v[1]
        numeric = len(v) == 3
        d.t("" if numeric else '"').piece((kind, text)).t("" if numeric else '"')
    else:
        d.t(json.dumps(v))


@template("json")
def json_customer(d):
    who = name()
    rec = {
        "id": ("NEG:UUID", uuid()),
        "name": who,
        "contact": {"email": ("EMAIL", email(who)), "phone": ("PHONE", phone()), rng.choice(["mobile", "tel"]): ("PHONE", us_phone())},
        "address": {"street": ("ADDRESS", us_street()), "city": us_city(), "state": rng.choice(US_STATES), rng.choice(["zip", "zipCode", "postal_code"]): ("ZIP", us_zip()[:5])},
        "created_at": ("NEG:TIMESTAMP", neg_timestamp()),
        "app_version": ("NEG:VERSION", neg_version()),
    }
    json_value(d, rec, rng.choice([2, 4, 0]), 0)


@template("json")
def json_order(d):
    rec = {
        "order_id": ("NEG:ID", neg_id()),
        "total": ("NEG:AMOUNT", f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}", "n"),
        "payment": {"card_number": ("CREDIT_CARD", card(style=rng.choice(["bare", "space"]))), "exp": f"{rng.randint(1, 12):02d}/{rng.randint(26, 31)}"},
        "shipping": {"line1": ("ADDRESS", us_street(0)), "zip": ("ZIP", us_zip()[:5], "n") if rng.random() < 0.4 else ("ZIP", us_zip()[:5]), "tracking": ("NEG:TRACKING", tracking())},
        "device": {"imei": ("NEG:IMEI", imei("bare")), "ip": ("NEG:IP", neg_ip())},
    }
    json_value(d, rec, rng.choice([2, 0]), 0)


@template("json")
def json_people_list(d):
    d.t("[")
    for i in range(rng.randint(3, 6)):
        who = name()
        rec = {"name": who, "ssn": ("SSN", ssn(rng.choice(["bare", "dash"]))), "phone": ("PHONE", us_phone()), "zip": ("ZIP", us_zip()[:5]), "updated": ("NEG:TIMESTAMP", neg_timestamp())}
        json_value(d, rec, 0, 0)
        d.t(",\n " if i < 5 else "")
    d.t("{}]")


@template("json")
def json_event(d):
    rec = {
        "event": "checkout.completed",
        "ts": ("NEG:TIMESTAMP", str(rng.randint(1577836800000, 1790000000000)), "n"),
        "user_agent": ("NEG:VERSION", user_agent()),
        "customer": {"email": ("EMAIL", email()), "postcode": ("ZIP", uk_postcode()), "phone_number": ("PHONE", phone("GB"))},
        "order": {"ref": ("NEG:ID", neg_id()), "isbn": ("NEG:ISBN", isbn()), "amount": ("NEG:AMOUNT", amount())},
        "client_ip": ("NEG:IP", neg_ip()),
    }
    json_value(d, rec, rng.choice([2, 0]), 0)


@template("json")
def json_ndjson(d):
    for _ in range(rng.randint(4, 8)):
        rec = {"level": "info", "time": ("NEG:TIMESTAMP", neg_timestamp()), "msg": "profile updated", "tel": ("PHONE", phone()), "zip_code": ("ZIP", us_zip()[:5]), "build": ("NEG:VERSION", neg_version())}
        json_value(d, rec, 0, 0)
        d.t("\n")


# --- logs
@template("log")
def log_app(d):
    for _ in range(rng.randint(6, 12)):
        d.n("TIMESTAMP", neg_timestamp()).t(f" {rng.choice(['INFO', 'WARN', 'DEBUG'])} [{rng.choice(['api', 'worker', 'auth'])}] ")
        r = rng.random()
        if r < 0.25:
            d.t("login user=").e("EMAIL", email()).t(" ip=").n("IP", neg_ip()).t(" ua=\"").n("VERSION", user_agent()).t("\"\n")
        elif r < 0.45:
            d.t("sms sent to=").e("PHONE", phone(style=rng.choice(["e164", "00", "intl"]))).t(" msg_id=").n("UUID", uuid()).t("\n")
        elif r < 0.6:
            d.t("shipment created tracking=").n("TRACKING", tracking()).t(" order=").n("ID", neg_id()).t("\n")
        elif r < 0.75:
            d.t("device bound imei=").n("IMEI", imei()).t(" app=").n("VERSION", neg_version()).t("\n")
        elif r < 0.88:
            d.t("payment declined card=").e("CREDIT_CARD", card(style="bare")).t(" amount=").n("AMOUNT", f"{rng.randint(1, 999)}.{rng.randint(0, 99):02d}").t("\n")
        else:
            d.t("took ").n("AMOUNT", f"{rng.randint(1, 999)}.{rng.randint(0, 999):03d}").t(f" ms, request ").n("UUID", uuid()).t("\n")


@template("log")
def log_access(d):
    for _ in range(rng.randint(6, 12)):
        d.n("IP", ipv4()).t(' - - [').n("TIMESTAMP", f"{rng.randint(1, 28):02d}/{rng.choice(MONTHS)}/2025:{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d} +0000").t('] "GET /api/v1/orders/')
        d.n("ID", str(rng.randint(10**8, 10**9 - 1))).t(f'?zip=').e("ZIP", us_zip()[:5]).t(' HTTP/1.1" 200 ').n("AMOUNT", str(rng.randint(100, 99999))).t(' "-" "').n("VERSION", user_agent()).t('"\n')


@template("log")
def log_crm(d):
    d.t("CRM sync report ").n("TIMESTAMP", neg_timestamp()).t("\n")
    for _ in range(rng.randint(4, 8)):
        d.t("- updated contact ").n("ID", neg_id()).t(": phone ").e("PHONE", phone()).t(", address ")
        if rng.random() < 0.5:
            us_address_block(d)
        else:
            uk_address_block(d)
        d.t("\n")
    d.t("sync client ").n("VERSION", neg_version()).t(" finished in ").n("AMOUNT", f"{rng.randint(1, 99)}.{rng.randint(0, 99):02d}").t(" s\n")


# ---------------------------------------------------------------- assemble
DOCS_PER_TEMPLATE = 8


def sha(s):
    return hashlib.sha1(s.encode()).hexdigest()


def main():
    out = []
    for genre, fns in TEMPLATES.items():
        kept_template = min(fns, key=lambda f: sha(f.__name__)).__name__
        for fn in fns:
            for k in range(DOCS_PER_TEMPLATE):
                d = Doc()
                fn(d)
                text = d.text()
                assert all(ord(c) < 0x10000 for c in text)
                for x in d.entities + d.negatives:
                    assert text[x["start"] : x["end"]] == x["value"], (fn.__name__, x)
                doc_id = f"{genre}/{fn.__name__}/{k}"
                kept = fn.__name__ == kept_template or int(sha(doc_id)[:8], 16) % 5 == 0
                out.append(
                    {
                        "id": doc_id,
                        "genre": genre,
                        "template": fn.__name__,
                        "split": "kept-aside" if kept else "tuning",
                        "text": text,
                        "entities": d.entities,
                        "negatives": d.negatives,
                        "source": "test/corpus/pii-documents/build.py (mimesis 22.2.0, faker 40.63.0, phonenumbers-validated numbers)",
                    }
                )
    for r in out:
        sys.stdout.write(json.dumps(r, ensure_ascii=False) + "\n")


main()
