-- Headless Neovim 0.11 end-to-end check, run by test_neovim_e2e.py:
--   nvim --clean --headless -u nvim_e2e.lua kernel.py
-- Starts flydsl-ls through editors/nvim/lsp/flydsl_ls.lua, waits for its diagnostics,
-- applies the FLY101 quick fix through vim.lsp.buf.code_action, writes the file, and
-- reports what happened as JSON in $FLYDSL_E2E_RESULT.
local result = { steps = {} }
local function note(step) table.insert(result.steps, step) end

local function finish(ok, err)
  result.ok = ok
  result.error = err
  local f = assert(io.open(vim.env.FLYDSL_E2E_RESULT, 'w'))
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd('qall!')
end

vim.opt.runtimepath:prepend(vim.env.FLYDSL_E2E_RUNTIME)
vim.cmd('filetype on')
vim.lsp.config('flydsl_ls', {
  cmd = { vim.env.FLYDSL_E2E_PYTHON, '-m', 'flydsl_ls', 'serve' },
})
vim.lsp.enable('flydsl_ls')

local function run()
  local bufnr = vim.api.nvim_get_current_buf()
  local attached = vim.wait(60000, function()
    return #vim.lsp.get_clients({ bufnr = bufnr, name = 'flydsl_ls' }) > 0
  end, 50)
  if not attached then return finish(false, 'flydsl_ls never attached') end
  note('attached')

  local target
  local got = vim.wait(60000, function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.code == 'FLY101' and d.source == 'flydsl-ls' and d.severity == vim.diagnostic.severity.WARN then
        local line = vim.api.nvim_buf_get_lines(bufnr, d.lnum, d.lnum + 1, false)[1]
        if line:find('_AV(tid)', 1, true) then target = d return true end
      end
    end
    return false
  end, 50)
  if not got then return finish(false, 'no FLY101 diagnostic') end
  result.diagnostics = #vim.diagnostic.get(bufnr)
  result.diagnostic = { lnum = target.lnum, col = target.col, message = target.message }
  note('diagnostics')

  vim.api.nvim_win_set_cursor(0, { target.lnum + 1, target.col })
  local before = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  local titles = {}
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      table.insert(titles, action.title)
      return action.title == 'Remove the ArithValue wrapper' and action.isPreferred == true
    end,
  })
  local changed = vim.wait(60000, function()
    local now = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
    return table.concat(now, '\n') ~= table.concat(before, '\n')
  end, 50)
  result.titles = titles
  if not changed then return finish(false, 'the quick fix did not change the buffer') end
  note('applied')

  vim.cmd('write')
  note('written')
  finish(true, nil)
end

vim.api.nvim_create_autocmd('VimEnter', {
  callback = function()
    vim.schedule(function()
      local ok, err = pcall(run)
      if not ok then finish(false, tostring(err)) end
    end)
  end,
})
