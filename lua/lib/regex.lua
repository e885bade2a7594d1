-- Regular expressions for the grep tool (Lua patterns are not what a model writes). A backtracking matcher over bytes:
-- literals, `.`, classes `[a-z_]` `[^...]`, `\d \w \s \D \W \S \b \B`, anchors `^ $`, groups `( )` and `(?: )`,
-- alternation `|`, quantifiers `* + ? {n} {n,} {n,m}` (a trailing `?` makes them lazy). `(?i)` at the start, or
-- `opts.ignore_case`, matches without regard to ASCII case.
--
--   local regex = require("regex")
--   local re, err = regex.compile("fn%s+%w+", { ignore_case = true })   -- err: the pattern's problem, with its place
--   local from, to = re:find(line)        -- nil when it does not match
--
-- A pattern that backtracks too much on one line (more than `MAX_STEPS` steps, or 2 per byte of a longer line) stops
-- with an error instead of running until the tool's time budget: `find` raises `regex.TOO_COMPLEX`.

local M = {}

M.MAX_STEPS = 10000
M.TOO_COMPLEX = "the pattern backtracks too much on this line"

local function set_of(fn)
  local set = {}
  for b = 0, 255 do set[b] = fn(b) or nil end
  return set
end

local DIGIT = set_of(function(b) return b >= 48 and b <= 57 end)
local WORD = set_of(function(b)
  return (b >= 48 and b <= 57) or (b >= 65 and b <= 90) or (b >= 97 and b <= 122) or b == 95
end)
local SPACE = set_of(function(b) return b == 32 or (b >= 9 and b <= 13) end)
local function negate(set) return set_of(function(b) return not set[b] end) end
local CLASSES = { d = DIGIT, w = WORD, s = SPACE, D = negate(DIGIT), W = negate(WORD), S = negate(SPACE) }
local ESCAPES = { n = "\n", t = "\t", r = "\r", f = "\f", v = "\v", ["0"] = "\0" }

-- Parser ------------------------------------------------------------------------------------------------------------

local Parser = {}
Parser.__index = Parser

local function fail(p, msg)
  error({ regex = string.format("%s at position %d of the pattern", msg, p.i) }, 0)
end

function Parser:peek() return self.src:sub(self.i, self.i) end
function Parser:eat() local c = self:peek(); self.i = self.i + 1; return c end

function Parser:alternation()
  local alts = { self:sequence() }
  while self:peek() == "|" do
    self.i = self.i + 1
    alts[#alts + 1] = self:sequence()
  end
  return { t = "group", alts = alts }
end

function Parser:sequence()
  local seq = {}
  while self.i <= #self.src do
    local c = self:peek()
    if c == "|" or c == ")" then break end
    local node = self:atom()
    local min, max, lazy = 1, 1, false
    local q = self:peek()
    if q == "*" or q == "+" or q == "?" then
      self.i = self.i + 1
      min = (q == "+") and 1 or 0
      max = (q == "?") and 1 or math.huge
    elseif q == "{" and self.src:find("^{%d*,?%d*}", self.i) then
      local a, comma, b = self.src:match("^{(%d*)(,?)(%d*)}", self.i)
      if a == "" and b == "" then fail(self, "an empty {} quantifier") end
      self.i = self.i + #a + #comma + #b + 2
      min = tonumber(a) or 0
      max = comma == "" and min or (tonumber(b) or math.huge)
      if max < min then fail(self, "a {n,m} quantifier with m < n") end
      if min > 1000 or (max ~= math.huge and max > 1000) then fail(self, "a repetition count over 1000") end
    end
    if min ~= 1 or max ~= 1 then
      if node.t == "bol" or node.t == "eol" or node.t == "wordb" then fail(self, "a quantifier after an anchor") end
      if self:peek() == "?" then
        lazy = true
        self.i = self.i + 1
      end
      local after = self:peek()
      if after == "*" or after == "+" or (after == "?" and not lazy) then fail(self, "a quantifier after a quantifier") end
    end
    seq[#seq + 1] = { node = node, min = min, max = max, lazy = lazy }
  end
  return seq
end

function Parser:class()
  -- after "["
  local neg = false
  if self:peek() == "^" then neg = true; self.i = self.i + 1 end
  local set, first = {}, true
  while true do
    if self.i > #self.src then fail(self, "an unclosed [") end
    local c = self:eat()
    if c == "]" and not first then break end
    first = false
    local lo
    if c == "\\" then
      local e = self:eat()
      if CLASSES[e] then
        for b, v in pairs(CLASSES[e]) do if v then set[b] = true end end
        goto continue
      end
      lo = ESCAPES[e] or e
    else
      lo = c
    end
    if self:peek() == "-" and self.src:sub(self.i + 1, self.i + 1) ~= "]" and self.i + 1 <= #self.src then
      self.i = self.i + 1
      local hi = self:eat()
      if hi == "\\" then hi = ESCAPES[self:peek()] or self:peek(); self.i = self.i + 1 end
      if hi:byte() < lo:byte() then fail(self, "a class range out of order") end
      for b = lo:byte(), hi:byte() do set[b] = true end
    else
      set[lo:byte()] = true
    end
    ::continue::
  end
  if self.ic then
    -- Matched against the lower-cased line: a class holding a letter holds its lower case.
    for b = 65, 90 do if set[b] then set[b + 32] = true end end
  end
  if neg then return negate(set) end
  return set
end

function Parser:atom()
  local c = self:eat()
  if c == "." then return { t = "any" } end
  if c == "^" then return { t = "bol" } end
  if c == "$" then return { t = "eol" } end
  if c == "[" then return { t = "class", set = self:class() } end
  if c == "(" then
    if self.src:sub(self.i, self.i + 1) == "?:" then self.i = self.i + 2 end
    local g = self:alternation()
    if self:eat() ~= ")" then fail(self, "an unclosed (") end
    return g
  end
  if c == ")" then fail(self, "an unmatched )") end
  if c == "*" or c == "+" or c == "?" then fail(self, "a quantifier with nothing before it") end
  if c == "\\" then
    if self.i > #self.src then fail(self, "a trailing backslash") end
    local e = self:eat()
    if CLASSES[e] then return { t = "class", set = CLASSES[e] } end
    if e == "b" then return { t = "wordb", neg = false } end
    if e == "B" then return { t = "wordb", neg = true } end
    local lit = ESCAPES[e] or e
    return { t = "char", c = self.ic and lit:lower() or lit }
  end
  return { t = "char", c = self.ic and c:lower() or c }
end

-- Matcher -----------------------------------------------------------------------------------------------------------

local Regex = {}
Regex.__index = Regex

local function simple(node) return node.t == "char" or node.t == "any" or node.t == "class" end

function Regex:_one(node, s, i)
  local b = s:byte(i)
  if b == nil then return false end
  if node.t == "char" then return s:byte(i) == node.c:byte() end
  if node.t == "any" then return b ~= 10 end
  return node.set[b] == true
end

function Regex:_node(node, s, i, cont)
  local t = node.t
  if t == "group" then
    for _, alt in ipairs(node.alts) do
      local r = self:_seq(alt, 1, s, i, cont)
      if r then return r end
    end
    return nil
  elseif t == "bol" then
    if i == 1 then return cont(i) end
    return nil
  elseif t == "eol" then
    if i == #s + 1 then return cont(i) end
    return nil
  elseif t == "wordb" then
    local a = i > 1 and WORD[s:byte(i - 1)] or false
    local b = i <= #s and WORD[s:byte(i)] or false
    if (a ~= b) ~= node.neg then return cont(i) end
    return nil
  else
    if self:_one(node, s, i) then return cont(i + 1) end
    return nil
  end
end

function Regex:_seq(seq, k, s, i, cont)
  self.steps = self.steps + 1
  if self.steps > self.budget then error({ regex = M.TOO_COMPLEX }, 0) end
  local item = seq[k]
  if item == nil then return cont(i) end
  local node, min, max = item.node, item.min, item.max
  local nextk = function(j) return self:_seq(seq, k + 1, s, j, cont) end
  if min == 1 and max == 1 then return self:_node(node, s, i, nextk) end
  if simple(node) then
    -- Count the run once, then try the rest from the longest (greedy) or the shortest (lazy).
    local n = 0
    while n < max and self:_one(node, s, i + n) do n = n + 1 end
    if n < min then return nil end
    if item.lazy then
      for c = min, n do
        local r = nextk(i + c)
        if r then return r end
      end
    else
      for c = n, min, -1 do
        local r = nextk(i + c)
        if r then return r end
      end
    end
    return nil
  end
  local function rep(count, j)
    if item.lazy and count >= min then
      local r = nextk(j)
      if r then return r end
    end
    if count < max then
      local r = self:_node(node, s, j, function(j2)
        if j2 == j then return nil end -- an empty iteration would loop forever
        return rep(count + 1, j2)
      end)
      if r then return r end
    end
    if not item.lazy and count >= min then return nextk(j) end
    return nil
  end
  return rep(0, i)
end

local function identity(j) return j end

-- The first match of the pattern in `s` (from byte `init`, default 1): start and end (inclusive), or nil.
function Regex:find(s, init)
  if self.literal then
    local subject = self.ignore_case and s:lower() or s
    if not subject:find(self.literal, init or 1, true) then return nil end
  end
  local subject = self.ignore_case and s:lower() or s
  self.steps = 0
  -- Every start position costs a step: a long line gets a budget in proportion.
  self.budget = math.max(M.MAX_STEPS, 2 * #subject)
  local start, last = init or 1, #subject + 1
  while start <= last do
    -- A pattern that starts with a plain character can only match where that character is.
    if self.first_char then
      start = subject:find(self.first_char, start, true)
      if not start then return nil end
    end
    local r = self:_node(self.top, subject, start, identity)
    if r then return start, r - 1 end
    if self.anchored then break end
    start = start + 1
  end
  return nil
end

-- The longest run of plain characters every match must contain (for a fast precheck), or nil.
local function required_literal(top)
  if #top.alts ~= 1 then return nil end
  local best, run = "", ""
  for _, item in ipairs(top.alts[1]) do
    if item.node.t == "char" and item.min == 1 and item.max == 1 then
      run = run .. item.node.c
    else
      if #run > #best then best = run end
      run = ""
    end
  end
  if #run > #best then best = run end
  return #best >= 2 and best or nil
end

-- Compile `pattern`; nil and a message naming the problem when it is not a valid expression.
function M.compile(pattern, opts)
  opts = opts or {}
  local ignore_case = opts.ignore_case == true
  if pattern:sub(1, 4) == "(?i)" then
    ignore_case = true
    pattern = pattern:sub(5)
  end
  local p = setmetatable({ src = pattern, i = 1, ic = ignore_case }, Parser)
  local ok, top = pcall(function()
    local g = p:alternation()
    if p.i <= #p.src then fail(p, "an unmatched )") end
    return g
  end)
  if not ok then
    if type(top) == "table" and top.regex then return nil, top.regex end
    error(top, 0)
  end
  local first = top.alts[1] and top.alts[1][1]
  local re = setmetatable({
    top = top,
    ignore_case = ignore_case,
    steps = 0,
    budget = M.MAX_STEPS,
    anchored = #top.alts == 1 and first ~= nil and first.node.t == "bol",
  }, Regex)
  re.literal = required_literal(top)
  if #top.alts == 1 and first ~= nil and first.node.t == "char" and first.min >= 1 then re.first_char = first.node.c end
  return re
end

-- `re:find` that returns nil, message instead of raising when the pattern backtracks too much.
function M.find(re, s, init)
  local ok, a, b = pcall(re.find, re, s, init)
  if ok then return a, b end
  if type(a) == "table" and a.regex then return nil, nil, a.regex end
  error(a, 0)
end

return M
