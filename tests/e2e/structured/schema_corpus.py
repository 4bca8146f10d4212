"""A corpus of JSON schemas for constrained-decoding tests, each with a prompt that
invites an answer of that shape. Strings, numbers and arrays are bounded so a small
model's output ends within the token budget (unbounded, it may write digits until
max_tokens); the shapes cover nested objects, arrays,
enums, const, numbers with bounds, required and optional properties, $ref/$defs (a chain;
recursion is accepted too, but a small greedy model nests forever),
anyOf, nullable fields, patterns and string formats."""

S = {"type": "string", "maxLength": 20}


def obj(props, required=None, **extra):
    d = {"type": "object", "properties": props, "required": list(props) if required is None else required,
         "additionalProperties": False}
    d.update(extra)
    return d


CORPUS = [
    ("person", "Describe a person.", obj({"name": S, "age": {"type": "integer", "minimum": 0, "maximum": 120}})),
    ("city", "Tell me about a city.", obj({"city": S, "country": S, "population": {"type": "integer", "minimum": 0, "maximum": 99999999}})),
    ("enum_color", "What is your favourite colour?", obj({"color": {"enum": ["red", "green", "blue", "yellow"]}})),
    ("const_version", "Report the API version.", obj({"version": {"const": "v1"}, "ok": {"type": "boolean"}})),
    ("bounded_number", "Give a temperature reading.",
     obj({"celsius": {"type": "number", "minimum": -50, "maximum": 60}, "unit": {"const": "C"}})),
    ("int_range", "Rate the film from 1 to 5.", obj({"rating": {"type": "integer", "minimum": 1, "maximum": 5}})),
    ("string_array", "List some fruits.",
     obj({"fruits": {"type": "array", "items": S, "minItems": 1, "maxItems": 4}})),
    ("int_array", "Give me a few prime numbers.",
     obj({"primes": {"type": "array", "items": {"type": "integer", "minimum": 2, "maximum": 1000},
                     "minItems": 2, "maxItems": 5}})),
    ("nested", "Describe a book and its author.",
     obj({"title": S, "author": obj({"name": S, "born": {"type": "integer", "minimum": 1000, "maximum": 2025}})})),
    ("deep_nested", "Describe a company's headquarters address.",
     obj({"company": obj({"name": S, "hq": obj({"street": S, "city": S, "zip": {"type": "string",
                                                                                  "pattern": "^[0-9]{5}$"}})})})),
    ("array_of_objects", "List two employees with their roles.",
     obj({"employees": {"type": "array", "maxItems": 3, "minItems": 1,
                        "items": obj({"name": S, "role": {"enum": ["engineer", "manager", "designer"]}})}})),
    ("optional_props", "Describe a pet; the nickname is optional.",
     obj({"species": {"enum": ["cat", "dog", "bird"]}, "name": S, "nickname": S}, required=["species", "name"])),
    ("boolean_flags", "Is the shop open, and does it deliver?",
     obj({"open": {"type": "boolean"}, "delivers": {"type": "boolean"}})),
    ("nullable", "Give a user's middle name, or null if none.",
     obj({"first": S, "middle": {"anyOf": [S, {"type": "null"}]}})),
    ("any_of", "Give an identifier: a number or a short code.",
     obj({"id": {"anyOf": [{"type": "integer", "minimum": 0, "maximum": 9999}, {"type": "string", "maxLength": 8}]}})),
    ("refs", "Describe a trip from one place to another.",
     {"$defs": {"place": obj({"name": S, "lat": {"type": "number", "minimum": -90, "maximum": 90},
                               "lon": {"type": "number", "minimum": -180, "maximum": 180}})},
      **obj({"from": {"$ref": "#/$defs/place"}, "to": {"$ref": "#/$defs/place"}})}),
    ("ref_chain", "Give a category with a few items.",
     {"$defs": {"item": obj({"label": S, "price": {"type": "integer", "minimum": 0, "maximum": 999}}),
                "category": obj({"label": S, "items": {"type": "array", "maxItems": 2,
                                                        "items": {"$ref": "#/$defs/item"}}})},
      "$ref": "#/$defs/category"}),
    ("date_format", "When is the next holiday?", obj({"holiday": S, "date": {"type": "string", "format": "date"}})),
    ("email_format", "Give a contact email.", obj({"email": {"type": "string", "format": "email"}})),
    ("uuid_format", "Give a record identifier.", obj({"uuid": {"type": "string", "format": "uuid"}})),
    ("pattern", "Give a product code like ABC-123.",
     obj({"code": {"type": "string", "pattern": "^[A-Z]{3}-[0-9]{3}$"}})),
    ("min_length", "Give a password hint.", obj({"hint": {"type": "string", "minLength": 3, "maxLength": 16}})),
    ("tuple_items", "Give a point as [x, y].",
     obj({"point": {"type": "array", "prefixItems": [{"type": "integer", "minimum": -99, "maximum": 99},
                                                     {"type": "integer", "minimum": -99, "maximum": 99}], "items": False}})),
    ("enum_numbers", "Pick a dice face.", obj({"face": {"enum": [1, 2, 3, 4, 5, 6]}})),
    ("mixed_enum", "Choose a setting.", obj({"mode": {"enum": ["auto", 0, 1, True, None]}})),
    ("many_fields", "Fill in a weather report.",
     obj({"city": S, "temp": {"type": "number", "minimum": -50, "maximum": 60},
          "humidity": {"type": "integer", "minimum": 0, "maximum": 100}, "wind": {"type": "integer", "minimum": 0,
                                                                                  "maximum": 200},
          "sky": {"enum": ["clear", "cloudy", "rain", "snow"]}, "alert": {"type": "boolean"}})),
    ("matrix", "Give a 2x2 matrix of small integers.",
     obj({"rows": {"type": "array", "minItems": 2, "maxItems": 2,
                   "items": {"type": "array", "minItems": 2, "maxItems": 2,
                             "items": {"type": "integer", "minimum": -9, "maximum": 9}}}})),
    ("extraction_invoice", "Extract the invoice: ACME Corp billed $120.50 on 2024-03-01 for 3 widgets.",
     obj({"vendor": S, "amount": {"type": "number", "minimum": 0, "maximum": 100000}, "currency": {"enum": ["USD", "EUR", "GBP"]},
          "date": {"type": "string", "format": "date"}, "quantity": {"type": "integer", "minimum": 0, "maximum": 1000}})),
    ("extraction_sentiment", "Classify: 'The food was great but the service was slow.'",
     obj({"sentiment": {"enum": ["positive", "negative", "mixed", "neutral"]},
          "aspects": {"type": "array", "maxItems": 3, "items": obj({"aspect": S, "polarity": {
              "enum": ["positive", "negative"]}})}})),
    ("top_level_array", "List three colours.",
     {"type": "array", "items": {"enum": ["red", "green", "blue", "black", "white"]}, "minItems": 1,
      "maxItems": 3}),
    ("top_level_enum", "Answer yes or no: is water wet?", {"enum": ["yes", "no"]}),
    ("top_level_integer", "How many legs does a spider have?", {"type": "integer", "minimum": 0, "maximum": 100}),
    ("all_of", "Describe a vehicle.",
     {"allOf": [obj({"wheels": {"type": "integer", "minimum": 0, "maximum": 18}, "brand": S})]}),
    ("empty_object_ok", "Return an empty settings object or one with a theme.",
     obj({"theme": {"enum": ["dark", "light"]}}, required=[])),
]

assert len(CORPUS) >= 30
assert len({name for name, _, _ in CORPUS}) == len(CORPUS)
