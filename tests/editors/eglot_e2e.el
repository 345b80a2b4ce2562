;;; eglot_e2e.el --- headless Emacs 28 + eglot check of docs/editors/other.md's snippet  -*- lexical-binding: t -*-
;; Run by test_emacs_vim.py:
;;   emacs --batch -l eglot_e2e.el
;; with FLYDSL_E2E_SNIPPET (the Emacs snippets of the docs), FLYDSL_E2E_FILE (a legacy kernel
;; to open) and FLYDSL_E2E_RESULT (where the JSON report goes). Opens the file, connects
;; eglot as the snippet says, waits for flymake diagnostics, asks for a hover on a deprecated
;; API, then saves: the snippet's before-save hook applies source.fixAll.flydsl-ls.
(require 'json)
(require 'eglot)
(setq eglot-sync-connect 60 eglot-connect-timeout 120 eglot-autoshutdown t)

(defvar flydsl-e2e-result (list (cons 'steps [])))
(defun flydsl-e2e-note (key value) (push (cons key value) flydsl-e2e-result))
(defun flydsl-e2e-step (name)
  (setf (alist-get 'steps flydsl-e2e-result) (vconcat (alist-get 'steps flydsl-e2e-result) (list name))))
(defun flydsl-e2e-finish (ok &optional err)
  (flydsl-e2e-note 'ok (if ok t :json-false))
  (when err (flydsl-e2e-note 'error err))
  (with-temp-file (getenv "FLYDSL_E2E_RESULT") (insert (json-encode flydsl-e2e-result)))
  (kill-emacs (if ok 0 1)))
(defun flydsl-e2e-wait (what pred seconds)
  (let ((end (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) end))
      (accept-process-output nil 0.1))
    (or (funcall pred) (error "timed out waiting for %s" what))))

(condition-case err
    (progn
      (load (getenv "FLYDSL_E2E_SNIPPET") nil t)
      (find-file (getenv "FLYDSL_E2E_FILE"))
      (unless (derived-mode-p 'python-mode) (error "not in python-mode: %s" major-mode))
      ;; What M-x eglot does, without its prompts.
      (apply #'eglot (eglot--guess-contact))
      (flydsl-e2e-wait "eglot" (lambda () (eglot-current-server)) 120)
      (flydsl-e2e-note 'server (process-command (jsonrpc--process (eglot-current-server))))
      (flydsl-e2e-step "connected")

      (flymake-start)
      (flydsl-e2e-wait "flymake diagnostics"
                       (lambda () (flymake-start) (> (length (flymake-diagnostics)) 0)) 120)
      (flydsl-e2e-note 'diagnostics
                       (vconcat (mapcar (lambda (d) (substring-no-properties (flymake-diagnostic-text d)))
                                        (flymake-diagnostics))))
      (flydsl-e2e-step "diagnostics")

      (goto-char (point-min))
      (search-forward "acc.maximumf(peer)")
      (search-backward "maximumf")
      (let* ((hover (jsonrpc-request (eglot-current-server) :textDocument/hover
                                     (eglot--TextDocumentPositionParams)))
             (contents (plist-get hover :contents)))
        (flydsl-e2e-note 'hover (if (stringp contents) contents (plist-get contents :value))))
      (flydsl-e2e-step "hover")

      (set-buffer-modified-p t)
      (save-buffer)  ; the snippet's before-save-hook: fix-all
      (flydsl-e2e-note 'saved (buffer-substring-no-properties (point-min) (point-max)))
      (flydsl-e2e-step "fix-all on save")
      (flydsl-e2e-finish t))
  (error (flydsl-e2e-finish nil (error-message-string err))))
