// Hand-written expectations for encoding v1 (docs/protocol.md), shared by the
// encoding test and the script-free vector file test/vectors/encoding-v1.json.
// The JCS strings are written out by hand from RFC 8785, not produced by code.

/** Context as JSON source text (so -0 and 1e21 survive) → its RFC 8785 form. */
export const CONTEXT_CASES: { description: string; context_json: string; jcs: string }[] = [
  { description: "absent context is the empty object", context_json: "{}", jcs: "{}" },
  {
    description: "the demo purchase",
    context_json: '{"merchant":"shop-a","currency":"EUR","amount":20}',
    jcs: '{"amount":20,"currency":"EUR","merchant":"shop-a"}',
  },
  { description: "key order does not matter", context_json: '{"b":1,"a":2}', jcs: '{"a":2,"b":1}' },
  { description: "upper case sorts before lower case", context_json: '{"b":1,"a":2,"B":3}', jcs: '{"B":3,"a":2,"b":1}' },
  {
    description: "keys sort by UTF-16 code units, not code points (RFC 8785 §3.2.3 example)",
    context_json:
      '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}',
    jcs: '{"\\r":"Carriage Return","1":"One","\u0080":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
  },
  {
    description: "ECMAScript number formatting: 1e21, 0.1, -0, 1e-7, 100.0, 2^53",
    context_json: '{"n":1e21,"m":0.1,"z":-0,"s":1e-7,"i":100.0,"big":9007199254740992,"neg":-1.5}',
    jcs: '{"big":9007199254740992,"i":100,"m":0.1,"n":1e+21,"neg":-1.5,"s":1e-7,"z":0}',
  },
  {
    description: "minimal string escaping: quote, backslash, control characters as \\n \\t \\u0001; non-ASCII and / raw",
    context_json: '{"s":"q\\" b\\\\ n\\n t\\t c\\u0001 e\\u00e9 g\\ud83d\\ude00 /\\/ \\u001f \\u007f"}',
    jcs: '{"s":"q\\" b\\\\ n\\n t\\t c\\u0001 eé g😀 // \\u001f \u007f"}',
  },
  {
    description: "nested objects sort at every level; arrays keep their order; literals",
    context_json: '{"a":[3,{"z":1,"y":[true,false,null]}],"0":{"d":{},"c":[]}}',
    jcs: '{"0":{"c":[],"d":{}},"a":[3,{"y":[true,false,null],"z":1}]}',
  },
  {
    description: "__proto__ and constructor are ordinary keys",
    context_json: '{"constructor":"x","__proto__":{"p":1},"amount":1}',
    jcs: '{"__proto__":{"p":1},"amount":1,"constructor":"x"}',
  },
];

export const ACTION_CASES: string[] = ["purchase", "refund", "", "héllo ☃ 😀", "a\u0000b", "x".repeat(256)];

export const NONCE_CASES: string[] = ["00".repeat(31), "ff".repeat(31), "0123456789abcdef".repeat(3) + "0123456789abcd", "80" + "00".repeat(30)];
