/*
 * The paywall page's "pay with a browser wallet" (plain browser script).
 * With an injected EIP-1193 wallet (window.ethereum):
 *
 *   1. ask for an account (eth_requestAccounts);
 *   2. put the wallet on the payment's chain (#x402-route): EIP-3326
 *      wallet_switchEthereumChain, and when the wallet does not know the chain
 *      (error 4902) EIP-3085 wallet_addEthereumChain, then check eth_chainId;
 *   3. take the challenge: the one embedded in the page (#x402-challenge, a
 *      paid GET), or, on a POST route's form page, the 402 answer to POSTing
 *      the form's JSON body (a bad field is answered 400 here, never charged);
 *   4. read the payer's balance of the asset (eth_call balanceOf) when the
 *      wallet can, and stop before signing when it is short;
 *   5. sign the EIP-3009 TransferWithAuthorization (eth_signTypedData_v4: a
 *      signature, no transaction), send the same request again with
 *      PAYMENT-SIGNATURE, and show the answer and its settlement
 *      (PAYMENT-RESPONSE); the state line then says "Paid".
 *
 * Every failure is said in plain words (wallet codes 4001 user rejected,
 * 4902 unknown chain, -32002 request pending; the gateway's refusal codes),
 * the raw message only as a detail.
 * <body data-paid="200"> (the paid call's status, or "error") marks the end for tests.
 */
(function () {
  'use strict';
  const byId = (id) => document.getElementById(id);
  const embedded = byId('x402-challenge');
  const route = JSON.parse(byId('x402-route').textContent);
  const form = byId('call-form');
  const button = byId('pay');
  const status = byId('pay-status');
  const state = byId('state');
  const answer = byId('answer');
  const result = byId('result');
  const eth = window.ethereum;
  const chainName = route.chain.chainName;
  const wantedChain = Number.parseInt(route.chain.chainId, 16);

  for (const copy of document.querySelectorAll('button[data-copy]')) {
    copy.addEventListener('click', () => {
      const text = byId(copy.dataset.copy).textContent;
      const done = () => {
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = 'Copy'), 1500);
      };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => selectText(copy.dataset.copy));
      else selectText(copy.dataset.copy);
    });
  }

  function selectText(id) {
    const range = document.createRange();
    range.selectNodeContents(byId(id));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  if (!eth || typeof eth.request !== 'function') {
    status.textContent =
      'No browser wallet found. Install one (e.g. MetaMask or Coinbase Wallet) and reload, or pay from code (below).';
    return;
  }
  button.disabled = false;
  status.textContent = `Ready. The payment is on ${chainName}; the wallet will be asked to switch to it if needed.`;
  if (typeof eth.on === 'function') {
    eth.on('chainChanged', (id) => {
      if (!button.disabled) status.textContent = `Wallet now on ${chainLabel(id)}.`;
    });
  }

  /** A failure already put in plain words for the person. */
  class Plain extends Error {}

  const chainLabel = (hexId) => {
    const id = Number.parseInt(String(hexId), 16);
    return id === wantedChain ? `${chainName} (chain ${id})` : `chain ${id}`;
  };
  const codeOf = (err) => (err && typeof err.code === 'number' ? err.code : err && err.data && err.data.code);
  const rawText = (err) => (err && err.message ? err.message : String(err));

  /** A wallet request whose errors become plain sentences; `plain(code)` names what a code means here. */
  async function ask(args, plain) {
    try {
      return await eth.request(args);
    } catch (err) {
      const code = codeOf(err);
      if (code === -32002)
        throw new Plain('The wallet already has a request open: finish or dismiss it in the wallet, then try again.');
      const text = plain(code, err);
      throw new Plain(text ? text : `The wallet refused (${rawText(err)}).`);
    }
  }

  async function connect() {
    const accounts = await ask({ method: 'eth_requestAccounts' }, (code) =>
      code === 4001 ? 'You declined to connect the wallet. Nothing was paid.' : undefined,
    );
    if (!accounts || !accounts[0]) throw new Plain('The wallet shared no account: unlock it and try again.');
    return accounts[0];
  }

  async function onChain() {
    const current = await ask({ method: 'eth_chainId' }, () => undefined);
    if (Number.parseInt(current, 16) === wantedChain) return;
    status.textContent = `Your wallet is on ${chainLabel(current)}; asking it to switch to ${chainName}…`;
    const switchTo = () =>
      ask({ method: 'wallet_switchEthereumChain', params: [{ chainId: route.chain.chainId }] }, (code) => {
        if (code === 4001)
          return `You declined to switch the wallet to ${chainName}. The payment is on ${chainName} (chain ${wantedChain}): nothing was paid.`;
        if (code === 4902) return 'unknown-chain';
        return undefined;
      });
    try {
      await switchTo();
    } catch (err) {
      if (!(err instanceof Plain) || err.message !== 'unknown-chain') throw err;
      if (!route.chain.add)
        throw new Plain(`Your wallet does not know chain ${wantedChain}: add it to the wallet, then try again.`);
      status.textContent = `Your wallet does not know ${chainName}; asking it to add the network…`;
      await ask({ method: 'wallet_addEthereumChain', params: [route.chain.add] }, (code) =>
        code === 4001 ? `You declined to add ${chainName} to the wallet. Nothing was paid.` : undefined,
      );
      await switchTo();
    }
    const now = await ask({ method: 'eth_chainId' }, () => undefined);
    if (Number.parseInt(now, 16) !== wantedChain)
      throw new Plain(`Your wallet is still on ${chainLabel(now)}, not ${chainName}: switch it by hand and try again.`);
  }

  /** The form's JSON body: empty optional fields left out, numbers, booleans and JSON fields parsed. */
  function formBody() {
    const body = {};
    for (const field of form.querySelectorAll('[data-kind]')) {
      field.classList.remove('invalid');
      const text = field.value.trim();
      if (text === '') {
        if (field.required) return invalid(field, `${field.name} is required.`);
        continue;
      }
      const kind = field.dataset.kind;
      if (kind === 'number') {
        const n = Number(text);
        if (!Number.isFinite(n)) return invalid(field, `${field.name} must be a number.`);
        body[field.name] = n;
      } else if (kind === 'boolean') body[field.name] = text === 'true';
      else if (kind === 'json') {
        try {
          body[field.name] = JSON.parse(text);
        } catch {
          // a plain word in a JSON field: taken as a string (e.g. one text where a string or a list is accepted)
          body[field.name] = text;
        }
      } else body[field.name] = field.value;
    }
    return body;
  }

  function invalid(field, text) {
    field.classList.add('invalid');
    field.focus();
    throw new Plain(`Check the form: ${text}`);
  }

  const requestInit = (body, headers) =>
    route.method === 'POST'
      ? { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }
      : { headers };
  const callUrl = () => (route.method === 'POST' ? route.path : location.href);

  /** The POST call's challenge: its 402 answer. A refusal before payment (400, 404, 503) is explained instead. */
  async function challengeOf(body) {
    if (embedded) return JSON.parse(embedded.textContent);
    const res = await fetch(callUrl(), requestInit(body, { accept: 'application/json' }));
    const header = res.headers.get('PAYMENT-REQUIRED');
    if (res.status === 402 && header) return fromBase64Json(header);
    const problem = await res.json().catch(() => ({}));
    const field = problem.field && form && form.querySelector(`[name="${CSS.escape(problem.field)}"]`);
    if (field) field.classList.add('invalid');
    throw new Plain(
      `The gateway refused this request before any payment (HTTP ${res.status}${problem.code ? `, ${problem.code}` : ''}): ${problem.detail || 'no detail'}. Nothing was paid.`,
    );
  }

  async function checkBalance(from, accepted) {
    let held;
    try {
      const data = `0x70a08231${from.slice(2).toLowerCase().padStart(64, '0')}`; // balanceOf(address)
      held = BigInt(await eth.request({ method: 'eth_call', params: [{ to: accepted.asset, data }, 'latest'] }));
    } catch {
      return; // a wallet that cannot read the chain: the gateway's verification checks the balance
    }
    if (held < BigInt(accepted.amount))
      throw new Plain(
        `Insufficient balance: this account holds ${usdc(held)} USDC on ${chainName} and the call costs ${usdc(BigInt(accepted.amount))} USDC. Nothing was paid.`,
      );
  }

  const usdc = (atomic) => {
    const whole = atomic / 1000000n;
    const frac = (atomic % 1000000n).toString().padStart(6, '0').replace(/0+$/, '');
    return frac ? `${whole}.${frac}` : String(whole);
  };

  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  const base64Json = (value) => {
    const utf8 = new TextEncoder().encode(JSON.stringify(value));
    let binary = '';
    for (const b of utf8) binary += String.fromCharCode(b);
    return btoa(binary);
  };
  const fromBase64Json = (text) =>
    JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(text), (c) => c.charCodeAt(0))));

  function typedDataOf(accepted, from) {
    const now = Math.floor(Date.now() / 1000);
    const authorization = {
      from,
      to: accepted.payTo,
      value: accepted.amount,
      validAfter: String(now - 600),
      validBefore: String(now + accepted.maxTimeoutSeconds),
      nonce: `0x${hex(crypto.getRandomValues(new Uint8Array(32)))}`,
    };
    const typedData = {
      types: {
        EIP712Domain: [
          { name: 'name', type: 'string' },
          { name: 'version', type: 'string' },
          { name: 'chainId', type: 'uint256' },
          { name: 'verifyingContract', type: 'address' },
        ],
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      domain: {
        name: accepted.extra.name,
        version: accepted.extra.version,
        chainId: Number(accepted.network.split(':')[1]),
        verifyingContract: accepted.asset,
      },
      message: authorization,
    };
    return { authorization, typedData };
  }

  /** Plain words for the gateway's refusal of a signed payment (the `error` of its fresh challenge). */
  function refusalText(res, reason, problem) {
    const why = String(reason || problem.code || '');
    if (/insufficient/i.test(why))
      return `Insufficient balance: the payer does not hold enough USDC on ${chainName}. Nothing was paid.`;
    if (/signature/i.test(why)) return 'The gateway could not verify the signature. Nothing was paid.';
    if (/expired|valid_?before|valid_?after/i.test(why))
      return "The authorization's time window was refused (check the computer's clock). Nothing was paid.";
    if (/network|chain/i.test(why))
      return `The payment was signed for another chain than ${chainName}. Nothing was paid.`;
    if (res.status === 402) return `The payment was refused (${why || 'no reason given'}). Nothing was paid.`;
    return `HTTP ${res.status}${why ? ` (${why})` : ''}: ${problem.detail || 'the call failed'}. Errors are not charged.`;
  }

  async function pay() {
    button.disabled = true;
    const body = form ? formBody() : undefined;
    status.textContent = 'Waiting for the wallet…';
    const from = await connect();
    await onChain();
    status.textContent = route.method === 'POST' ? 'Asking the gateway for the price of this request…' : 'Preparing…';
    const challenge = await challengeOf(body);
    const accepted = challenge.accepts[0];
    await checkBalance(from, accepted);
    const { authorization, typedData } = typedDataOf(accepted, from);
    status.textContent = `Sign the payment of ${usdc(BigInt(accepted.amount))} USDC in the wallet…`;
    const signature = await ask(
      { method: 'eth_signTypedData_v4', params: [from, JSON.stringify(typedData)] },
      (code) => (code === 4001 ? 'You declined to sign the payment. Nothing was paid.' : undefined),
    );
    status.textContent = 'Paying…';
    const payload = { x402Version: 2, resource: challenge.resource, accepted, payload: { signature, authorization } };
    const res = await fetch(
      callUrl(),
      requestInit(body, { accept: 'application/json', 'PAYMENT-SIGNATURE': base64Json(payload) }),
    );
    const text = await res.text();
    const receipt = res.headers.get('PAYMENT-RESPONSE');
    let parsed;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined; // not JSON: shown as it came
    }
    if (res.status === 200 && receipt) {
      const settled = fromBase64Json(receipt);
      state.textContent = `Paid · HTTP ${res.status}`;
      state.classList.add('paid');
      document.title = document.title.replace(/^Payment required: /, 'Paid: ');
      status.textContent = `Paid ${usdc(BigInt(accepted.amount))} USDC: settled in transaction ${settled.transaction}`;
      result.textContent = parsed === undefined ? text : JSON.stringify(parsed, null, 2);
      answer.hidden = false;
      button.textContent = button.textContent.replace(/^Pay /, 'Pay again ');
    } else {
      const fresh = res.headers.get('PAYMENT-REQUIRED');
      const reason = fresh ? fromBase64Json(fresh).error : undefined;
      status.textContent = refusalText(res, reason, parsed || {});
      status.classList.add('problem');
    }
    button.disabled = false;
    document.body.dataset.paid = String(res.status);
    if (res.status === 200) answer.scrollIntoView({ block: 'nearest' });
  }

  button.addEventListener('click', () => {
    status.classList.remove('problem');
    pay().catch((err) => {
      status.textContent =
        err instanceof Plain ? err.message : `The payment did not go through: ${rawText(err)}. Nothing was paid.`;
      status.classList.add('problem');
      button.disabled = false;
      document.body.dataset.paid = 'error';
    });
  });
})();
