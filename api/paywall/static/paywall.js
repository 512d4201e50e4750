/*
 * The paywall page's "pay with a browser wallet" (plain browser script).
 * With an injected EIP-1193 wallet (window.ethereum): ask for an account, sign
 * the EIP-3009 TransferWithAuthorization the embedded 402 challenge asks for
 * (eth_signTypedData_v4: a signature, no transaction), retry this very URL with
 * PAYMENT-SIGNATURE, and show the answer and its settlement (PAYMENT-RESPONSE).
 * <body data-paid="200"> (the retry's status) marks the end for tests.
 */
(function () {
  'use strict';
  const challenge = JSON.parse(document.getElementById('x402-challenge').textContent);
  const accepted = challenge.accepts[0];
  const button = document.getElementById('pay');
  const status = document.getElementById('pay-status');
  const result = document.getElementById('result');
  const eth = window.ethereum;

  if (!eth || typeof eth.request !== 'function') {
    status.textContent = 'No browser wallet found: pay from a terminal or an agent (below).';
    return;
  }
  button.disabled = false;
  status.textContent = '';

  const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  const base64Json = (value) => {
    const utf8 = new TextEncoder().encode(JSON.stringify(value));
    let binary = '';
    for (const b of utf8) binary += String.fromCharCode(b);
    return btoa(binary);
  };
  const fromBase64Json = (text) =>
    JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(text), (c) => c.charCodeAt(0))));

  async function pay() {
    button.disabled = true;
    status.textContent = 'waiting for the wallet…';
    const [from] = await eth.request({ method: 'eth_requestAccounts' });
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
    const signature = await eth.request({ method: 'eth_signTypedData_v4', params: [from, JSON.stringify(typedData)] });
    status.textContent = 'paying…';
    const payload = { x402Version: 2, resource: challenge.resource, accepted, payload: { signature, authorization } };
    const res = await fetch(location.href, {
      headers: { accept: 'application/json', 'PAYMENT-SIGNATURE': base64Json(payload) },
    });
    const text = await res.text();
    const receipt = res.headers.get('PAYMENT-RESPONSE');
    let shown = text;
    try {
      shown = JSON.stringify(JSON.parse(text), null, 2);
    } catch {
      // not JSON: shown as it came
    }
    if (receipt) {
      const settled = fromBase64Json(receipt);
      status.textContent = `paid: HTTP ${res.status}, settled in transaction ${settled.transaction}`;
    } else {
      status.textContent = `HTTP ${res.status}: not paid`;
      button.disabled = false;
    }
    result.textContent = shown;
    result.hidden = false;
    document.body.dataset.paid = String(res.status);
  }

  button.addEventListener('click', () => {
    pay().catch((err) => {
      status.textContent = `payment failed: ${err && err.message ? err.message : err}`;
      button.disabled = false;
      document.body.dataset.paid = 'error';
    });
  });
})();
