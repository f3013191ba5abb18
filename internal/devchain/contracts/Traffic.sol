// SPDX-License-Identifier: MIT
// Contracts that make every kind of trace and log the API serves: events with
// 0 to 4 topics; nested CALL, DELEGATECALL and STATICCALL; CREATE and
// CREATE2; SELFDESTRUCT; a reverted inner call; a reverted transaction.
// Compiled by scripts/compile-contracts into Traffic.json (committed).
pragma solidity ^0.8.20;

contract Child {
    uint256 public x;

    event Poked(uint256 indexed v, address indexed by);

    constructor() payable {}

    function poke(uint256 v) external returns (uint256) {
        x = v;
        emit Poked(v, msg.sender);
        return v * 2;
    }

    function fail() external pure {
        revert("child failed");
    }

    function peek() external view returns (uint256) {
        return x + 1;
    }

    // A contract created in the same transaction is really destroyed, even
    // after Cancun (EIP-6780).
    function destroy(address payable to) external {
        selfdestruct(to);
    }
}

// Lib runs in the caller's storage through DELEGATECALL: same layout.
contract Lib {
    uint256 public x;

    event LibSet(uint256 v) anonymous;

    function setX(uint256 v) external {
        x = v;
        emit LibSet(v);
    }
}

contract Driver {
    uint256 public x;
    Lib public lib;
    uint256 public rounds;

    event Zero() anonymous;                                                   // 0 topics
    event One(uint256 v);                                                     // 1 topic
    event Two(uint256 indexed v);                                             // 2 topics
    event Three(uint256 indexed v, address indexed who);                      // 3 topics
    event Four(uint256 indexed v, address indexed who, bytes32 indexed tag);  // 4 topics

    constructor(Lib _lib) {
        lib = _lib;
    }

    function emitAll(uint256 v) public {
        emit Zero();
        emit One(v);
        emit Two(v);
        emit Three(v, msg.sender);
        emit Four(v, msg.sender, keccak256(abi.encode(v)));
    }

    // nested makes one transaction with every kind of trace.
    function nested(uint256 v) external returns (uint256) {
        rounds++;
        Child c = new Child();                                   // CREATE
        Child d = new Child{salt: bytes32(rounds)}();            // CREATE2
        uint256 r = c.poke(v);                                   // CALL, with a log
        (bool ok, ) = address(c).call(abi.encodeWithSignature("fail()")); // reverted inner CALL
        require(!ok, "fail() should fail");
        r += c.peek();                                           // STATICCALL
        (ok, ) = address(lib).delegatecall(abi.encodeWithSignature("setX(uint256)", v)); // DELEGATECALL
        require(ok, "delegatecall failed");
        d.destroy(payable(msg.sender));                          // SELFDESTRUCT
        emitAll(r);
        return r;
    }

    function alwaysRevert(uint256 v) external {
        x = v;
        revert("reverted on purpose");
    }

    receive() external payable {}
}
