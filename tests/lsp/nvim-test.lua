-- Headless Neovim (0.7 or later) as the language server's client, for
-- tests/it/lsp.rs: opens $APC_NVIM_FILE with `apc lsp` attached, waits
-- for the verdicts, rewrites line 2 (inside one function) to
-- $APC_NVIM_EDIT, waits for the verdicts of the new text, and writes
-- what the editor received to $APC_NVIM_OUT as JSON; then quits.
local apc = os.getenv("APC_BIN")
local file = os.getenv("APC_NVIM_FILE")
local edit = os.getenv("APC_NVIM_EDIT")
local out = os.getenv("APC_NVIM_OUT")

local published = {}
local logs = {}
local handlers = {
  ["textDocument/publishDiagnostics"] = function(err, result, ctx, config)
    table.insert(published, result.diagnostics)
    vim.lsp.diagnostic.on_publish_diagnostics(err, result, ctx, config)
  end,
  -- One line per check (the lines about idle-time proofs are left out).
  ["window/logMessage"] = function(_, result)
    if string.find(result.message, " remembered (", 1, true) then
      table.insert(logs, result.message)
    end
  end,
}

vim.cmd("edit " .. file)
local buf = vim.api.nvim_get_current_buf()
local client = vim.lsp.start_client({
  name = "apc",
  cmd = { apc, "lsp", "--timeout", "20" },
  root_dir = vim.fn.getcwd(),
  handlers = handlers,
})
vim.lsp.buf_attach_client(buf, client)

local result = { ok = false }
local function logged(n)
  return vim.wait(60000, function() return #logs >= n end, 20)
end

if logged(1) then
  result.before = published[#published]
  result.diagnostics_in_editor = #vim.diagnostic.get(buf)
  vim.api.nvim_buf_set_lines(buf, 1, 2, false, { edit })
  if logged(2) then
    result.after = published[#published]
    result.ok = true
  end
end
result.logs = logs
vim.fn.writefile({ vim.fn.json_encode(result) }, out)
vim.lsp.stop_client(client)
vim.wait(2000, function() return vim.lsp.client_is_stopped(client) end, 20)
vim.cmd("qa!")
