-- flydsl-ls for Neovim 0.11+: put this directory on 'runtimepath' (or copy this file to
-- ~/.config/nvim/lsp/flydsl_ls.lua), then call vim.lsp.enable('flydsl_ls').
-- Override any field with vim.lsp.config('flydsl_ls', { ... }).
--
-- In attached buffers, on_attach adds buffer-local commands that run the server's
-- workspace/executeCommand commands through client:exec_cmd:
--   :FlydslCompile [example] [arch]   compile a `# flydsl: example` function (default: the first)
--   :FlydslShowIsa [example] [arch]   compile and open the ISA of its first kernel
--   :FlydslLaunch [example] [arch]    compile and launch it (needs a ROCm GPU)
--   :FlydslVerifyFix                  compile before and after the fix under the cursor
-- The last result (a table, see docs/compile.md) is kept in b:flydsl_result.

local commands = {
  FlydslCompile = { command = 'flydsl-ls.compile', desc = 'flydsl-ls: compile a kernel example' },
  FlydslShowIsa = { command = 'flydsl-ls.showIsa', desc = 'flydsl-ls: compile and show the ISA' },
  FlydslLaunch = { command = 'flydsl-ls.launch', desc = 'flydsl-ls: compile and launch a kernel example' },
  FlydslVerifyFix = { command = 'flydsl-ls.verifyFix', desc = 'flydsl-ls: verify the fix under the cursor by compiling' },
}

local function given(value)
  return value ~= nil and value ~= vim.NIL and value ~= ''
end

--- Open a file the server wrote (ISA, IR) read-only in a split, unless it is shown already.
local function open_readonly(path)
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win)) == path then
      return vim.api.nvim_win_get_buf(win)
    end
  end
  vim.cmd('belowright vsplit ' .. vim.fn.fnameescape(path))
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].readonly = true
  vim.bo[buf].modifiable = false
  return buf
end

--- The flydsl-ls finding under the cursor, as the server sent it (for verifyFix).
local function diagnostic_at_cursor(bufnr)
  local row, col = unpack(vim.api.nvim_win_get_cursor(0))
  for _, d in ipairs(vim.diagnostic.get(bufnr, { lnum = row - 1 })) do
    local lsp = d.user_data and d.user_data.lsp
    if lsp and d.source == 'flydsl-ls' and d.col <= col and col <= (d.end_col or d.col) then
      return lsp
    end
  end
end

local function run(client, bufnr, name, opts)
  local spec = commands[name]
  local argument = { uri = vim.uri_from_bufnr(bufnr) }
  if spec.command == 'flydsl-ls.verifyFix' then
    argument.diagnostic = diagnostic_at_cursor(bufnr)
    if not argument.diagnostic then
      vim.notify('flydsl-ls: no flydsl-ls finding under the cursor', vim.log.levels.WARN)
      return
    end
  else
    argument.example = opts.fargs[1]
    argument.arch = opts.fargs[2]
  end
  client:exec_cmd({ title = name, command = spec.command, arguments = { argument } }, { bufnr = bufnr }, function(err, result)
    if err then
      vim.notify(('flydsl-ls: %s failed: %s'):format(spec.command, err.message or vim.inspect(err)), vim.log.levels.ERROR)
      return
    end
    if vim.api.nvim_buf_is_valid(bufnr) then
      vim.b[bufnr].flydsl_result = result
    end
    -- The server shows its message (window/showMessage) and, for showIsa, asks Neovim to
    -- open the ISA (window/showDocument); open it here only if that did not happen.
    if spec.command == 'flydsl-ls.showIsa' and result and result.ok and not given(result.shown) then
      local kernel = result.kernels and result.kernels[1]
      local isa = kernel and kernel.files and kernel.files.isa
      if given(isa) then open_readonly(isa) end
    end
  end)
end

---@type vim.lsp.Config
return {
  cmd = { 'flydsl-ls', 'serve' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt', '.git' },
  -- Editor settings go on top of [tool.flydsl-ls] in the nearest pyproject.toml.
  -- Keys: select, ignore, targetArch, flydslVersion, logLevel, diagnosticsDelay (ms),
  -- compileTimeout (s). vim.empty_dict(): an empty table would be sent as a JSON list.
  init_options = vim.empty_dict(),
  settings = {
    ['flydsl-ls'] = vim.empty_dict(),
  },
  on_attach = function(client, bufnr)
    for name, spec in pairs(commands) do
      vim.api.nvim_buf_create_user_command(bufnr, name, function(opts)
        run(client, bufnr, name, opts)
      end, { nargs = '*', desc = spec.desc })
    end
  end,
}
