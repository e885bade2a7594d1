-- bar-chart.lua: an example Lua tool that RENDERS a picture and hands it to the model.
--
-- It draws a bar chart as an uncompressed 24-bit BMP in pure Lua and returns the raw bytes as an attachment.
-- The tool knows nothing about providers, PNG encoders or base64: the agent sniffs the bytes, converts the BMP
-- (which no provider accepts) to PNG, and places it where the model's API wants it.

local WIDTH, HEIGHT, MARGIN = 640, 360, 20

local PALETTE = {
  { 0x4e, 0x79, 0xa7 }, { 0xf2, 0x8e, 0x2b }, { 0xe1, 0x57, 0x59 }, { 0x76, 0xb7, 0xb2 },
  { 0x59, 0xa1, 0x4f }, { 0xed, 0xc9, 0x48 }, { 0xb0, 0x7a, 0xa1 }, { 0xff, 0x9d, 0xa7 },
}

-- little-endian unsigned integers (fengari integers are 32-bit: every value here fits)
local function u16(n) return string.char(n % 256, (n // 256) % 256) end
local function u32(n) return string.char(n % 256, (n // 256) % 256, (n // 65536) % 256, (n // 16777216) % 256) end
local function bgr(c) return string.char(c[3], c[2], c[1]) end

local function render(values)
  local n = #values
  local max = 0
  for _, v in ipairs(values) do if v > max then max = v end end
  if max <= 0 then max = 1 end

  local plotW, plotH = WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN
  local slot = plotW // n
  local barW = math.max(1, (slot * 3) // 4)
  local heights = {}
  for i, v in ipairs(values) do heights[i] = math.floor(plotH * math.max(v, 0) / max + 0.5) end

  local white, axis = string.char(255, 255, 255), string.char(0x33, 0x33, 0x33)
  local rowPad = string.rep("\0", (4 - (WIDTH * 3) % 4) % 4)
  local rows, cache = {}, {}
  -- BMP rows are stored bottom-up: y = 0 is the bottom row of the picture.
  for y = 0, HEIGHT - 1 do
    local level = y - MARGIN -- height above the x axis
    local key
    if y == MARGIN - 1 then key = "axis"
    elseif level < 0 or level >= plotH then key = "blank"
    else
      local bits = {}
      for i = 1, n do bits[i] = (heights[i] > level) and "1" or "0" end
      key = table.concat(bits)
    end
    local row = cache[key]
    if not row then
      if key == "blank" then row = string.rep(white, WIDTH)
      elseif key == "axis" then row = string.rep(white, MARGIN) .. string.rep(axis, plotW) .. string.rep(white, MARGIN)
      else
        local segs, x = { string.rep(white, MARGIN) }, MARGIN
        for i = 1, n do
          local gap = slot - barW
          local colour = key:sub(i, i) == "1" and bgr(PALETTE[(i - 1) % #PALETTE + 1]) or white
          segs[#segs + 1] = string.rep(white, gap // 2) .. string.rep(colour, barW) .. string.rep(white, gap - gap // 2)
          x = x + slot
        end
        segs[#segs + 1] = string.rep(white, WIDTH - x)
        row = table.concat(segs)
      end
      row = row .. rowPad
      cache[key] = row
    end
    rows[#rows + 1] = row
  end

  local pixels = table.concat(rows)
  local header = "BM" .. u32(54 + #pixels) .. u32(0) .. u32(54)
    .. u32(40) .. u32(WIDTH) .. u32(HEIGHT) .. u16(1) .. u16(24) .. u32(0) .. u32(#pixels)
    .. u32(2835) .. u32(2835) .. u32(0) .. u32(0)
  return header .. pixels
end

return {
  name = "bar_chart",
  description = "Render a bar chart of the given numbers and show it as an image. "
    .. "Use it to let the user (and yourself) see the shape of a small data series.",
  parameters = {
    type = "object",
    properties = {
      values = { type = "array", items = { type = "number" }, minItems = 1, maxItems = 64,
                 description = "The bar heights, left to right." },
      title = { type = "string", description = "A caption for the chart." },
    },
    required = { "values" },
  },
  handler = function(args)
    local bmp = render(args.values)
    local caption = args.title or "bar chart"
    return {
      text = string.format("%s: %d bars, max %s", caption, #args.values, tostring(math.max(table.unpack(args.values)))),
      attachments = { { data = bmp, media_type = "image/bmp", name = "chart.bmp" } },
      meta = { title = caption, bars = #args.values },
    }
  end,
}
