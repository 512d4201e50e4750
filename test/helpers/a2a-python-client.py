"""
An agent paying an A2A skill with the official A2A client (`a2a-sdk` 0.3, the
A2A v0.3 JSON-RPC client) and Coinbase's x402 Python SDK (`x402[evm]`: an
EIP-3009 authorization signed with eth-account), used as test tools only
(test/integration/a2a-door.test.ts). Reads a JSON job on stdin:
{"base_url", "private_key", "skill", "input", "network", "asset"}; prints a
JSON report of what it saw: the agent card's interface, the challenge task,
the paid task, and tasks/get of it.
"""
import asyncio
import json
import sys
from uuid import uuid4

import httpx
from a2a.client import ClientConfig, ClientFactory
from a2a.types import DataPart, Message, Part, Role, TaskQueryParams, TextPart
from eth_account import Account
from x402 import x402Client
from x402.mechanisms.evm.exact import ExactEvmClientScheme
from x402.mechanisms.evm.signers import EthAccountSigner
from x402.schemas import PaymentRequired

X402_EXTENSION = "https://github.com/google-a2a/a2a-x402/v0.1"


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


async def last_task(client, message):
    task = None
    async for event in client.send_message(message):
        task = event[0] if isinstance(event, tuple) else event
    return task


async def main():
    job = json.loads(sys.stdin.read())
    payer = x402Client()
    payer.register("eip155:*", ExactEvmClientScheme(EthAccountSigner(Account.from_key(job["private_key"]))))
    payer.set_spend_controls(
        {"allowed_assets": [{"network": job["network"], "asset": job["asset"], "max_amount_per_payment": "200000"}]}
    )
    async with httpx.AsyncClient(timeout=120) as http:
        config = ClientConfig(streaming=False, httpx_client=http, extensions=[X402_EXTENSION])
        client = await ClientFactory.connect(job["base_url"], client_config=config)
        card = await client.get_card()

        ask = Message(
            message_id=str(uuid4()),
            role=Role.user,
            parts=[Part(root=DataPart(data=job["input"]))],
            metadata={"skill": job["skill"]},
        )
        challenged = await last_task(client, ask)
        metadata = challenged.status.message.metadata
        required = PaymentRequired.model_validate(metadata["x402.payment.required"])
        payload = await payer.create_payment_payload(required)

        pay = Message(
            message_id=str(uuid4()),
            role=Role.user,
            task_id=challenged.id,
            context_id=challenged.context_id,
            parts=[Part(root=TextPart(text="Here is the payment authorization."))],
            metadata={"x402.payment.status": "payment-submitted", "x402.payment.payload": dump(payload)},
        )
        paid = await last_task(client, pay)
        got = await client.get_task(TaskQueryParams(id=paid.id))
        print(
            json.dumps(
                {
                    "card": {"url": card.url, "preferred_transport": card.preferred_transport},
                    "challenged": dump(challenged),
                    "paid": dump(paid),
                    "got": dump(got),
                }
            )
        )


asyncio.run(main())
